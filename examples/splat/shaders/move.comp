#version 450
// The splat's particles: on frame 0 each starts from a hash of its
// number; on every later frame it orbits the centre, pulled by two
// attractors that circle it, and bounces off the walls of the unit square.
// Then it writes the grid cell it is in (its index for the scatter) and
// the count it adds there (1).
layout(local_size_x = 64) in;

layout(set = 0, binding = 0) buffer Particles { vec4 particles[]; }; // position, velocity
layout(set = 0, binding = 1) writeonly buffer Cells { int cells[]; };
layout(set = 0, binding = 2) writeonly buffer Ones { int ones[]; };

layout(push_constant) uniform Push {
    uint n;
    uint gw;
    uint gh;
    uint frame;
} pc;

uint hash(uint x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

float unit(uint h) { return float(h >> 8) * (1.0 / 16777216.0); }

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.n) {
        return;
    }
    vec4 p;
    if (pc.frame == 0u) {
        float a = 6.2831853 * unit(hash(2u * i));
        float r = 0.05 + 0.35 * unit(hash(2u * i + 1u));
        vec2 pos = vec2(0.5) + r * vec2(cos(a), sin(a));
        p = vec4(pos, vec2(-sin(a), cos(a)) * 0.004);
    } else {
        p = particles[i];
        float t = float(pc.frame) * 0.03;
        vec2 a1 = vec2(0.5) + 0.25 * vec2(cos(t), sin(t));
        vec2 a2 = vec2(0.5) - 0.25 * vec2(cos(1.3 * t), sin(1.3 * t));
        vec2 d1 = a1 - p.xy, d2 = a2 - p.xy;
        vec2 acc = d1 / (dot(d1, d1) + 0.01) + d2 / (dot(d2, d2) + 0.01);
        p.zw = 0.995 * p.zw + 0.00002 * acc;
        p.xy += p.zw;
        if (p.x < 0.0 || p.x >= 1.0) { p.z = -p.z; }
        if (p.y < 0.0 || p.y >= 1.0) { p.w = -p.w; }
        p.xy = clamp(p.xy, vec2(0.0), vec2(0.999999));
    }
    particles[i] = p;
    uint x = min(uint(p.x * float(pc.gw)), pc.gw - 1u);
    uint y = min(uint(p.y * float(pc.gh)), pc.gh - 1u);
    cells[i] = int(y * pc.gw + x);
    ones[i] = 1;
}
