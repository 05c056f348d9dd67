#version 450
// The splat's picture: colours each pixel by the count of its grid cell
// (black, through red and yellow, to white), and adds up the grid's
// counts into this frame's total, a workgroup at a time.
layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly buffer Grid { int grid[]; };
layout(set = 0, binding = 1) writeonly buffer Pixels { uint pixels[]; };
layout(set = 0, binding = 2) buffer Totals { uint totals[]; };

layout(push_constant) uniform Push {
    uint w;
    uint h;
    uint gw;
    uint gh;
    uint frame;
    uint bgra; // the image's bytes are B, G, R, A
} pc;

shared uint partial[256];

void main() {
    uint i = gl_GlobalInvocationID.x;
    uint l = gl_LocalInvocationID.x;
    if (i < pc.w * pc.h) {
        uint x = i % pc.w, y = i / pc.w;
        int count = grid[(y * pc.gh / pc.h) * pc.gw + x * pc.gw / pc.w];
        float v = clamp(log2(1.0 + float(count)) / 6.0, 0.0, 1.0);
        vec3 c = clamp(vec3(3.0 * v, 3.0 * v - 1.0, 3.0 * v - 2.0), 0.0, 1.0);
        uvec3 b = uvec3(c * 255.0 + 0.5);
        if (pc.bgra != 0u) {
            b = b.bgr;
        }
        pixels[i] = b.x | (b.y << 8) | (b.z << 16) | (255u << 24);
    }
    partial[l] = i < pc.gw * pc.gh ? uint(grid[i]) : 0u;
    barrier();
    for (uint s = 128u; s > 0u; s >>= 1) {
        if (l < s) {
            partial[l] += partial[l + s];
        }
        barrier();
    }
    if (l == 0u && partial[0] != 0u) {
        atomicAdd(totals[pc.frame], partial[0]);
    }
}
