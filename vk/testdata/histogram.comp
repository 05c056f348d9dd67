#version 450
// bins[(values[i] / scale) % NUM_BINS] += 1 for i < n, with a grid-stride
// loop. NUM_BINS is specialization constant 0.
layout(local_size_x = 64) in;

layout(constant_id = 0) const uint NUM_BINS = 16;

layout(set = 0, binding = 0) readonly buffer Values { uint values[]; };
layout(set = 0, binding = 1) buffer Bins { uint bins[]; };

layout(push_constant) uniform Push {
    uint n;
    uint scale;
} pc;

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) {
        atomicAdd(bins[(values[i] / pc.scale) % NUM_BINS], 1u);
    }
}
