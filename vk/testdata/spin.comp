#version 450
// A deliberately slow kernel: each invocation iterates a xorshift and
// multiply step iters times (a non-linear recurrence that the compiler
// cannot fold) and stores the result.
layout(local_size_x = 64) in;

layout(set = 0, binding = 0) writeonly buffer Out { uint data[]; };

layout(push_constant) uniform Push {
    uint n;
    uint iters;
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.n) {
        return;
    }
    uint x = i + 1u;
    for (uint k = 0u; k < pc.iters; k++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x = x * 1664525u + k;
    }
    data[i] = x;
}
