#version 450
// Copies n words from the buffer at address src to the buffer at address
// dst through buffer_reference pointers, adding add: a check that buffer
// device addresses work end to end. No descriptor bindings.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

layout(local_size_x = 64) in;

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words {
    uint w[];
};

layout(push_constant) uniform Push {
    uint64_t src;
    uint64_t dst;
    uint n;
    uint add;
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) {
        Words(pc.dst).w[i] = Words(pc.src).w[i] + pc.add;
    }
}
