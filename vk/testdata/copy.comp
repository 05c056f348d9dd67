#version 450
// dst[i] = src[i] + add for i < n. The workgroup size is specialization
// constant 0.
layout(local_size_x_id = 0) in;

layout(set = 0, binding = 0) readonly buffer Src { uint src[]; };
layout(set = 0, binding = 1) writeonly buffer Dst { uint dst[]; };

layout(push_constant) uniform Push {
    uint n;
    uint add;
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) {
        dst[i] = src[i] + pc.add;
    }
}
