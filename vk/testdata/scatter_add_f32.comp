#version 450
// data[idx[i]] += upd[i] for i < n, with float32 atomic add.
#extension GL_EXT_shader_atomic_float : require
layout(local_size_x = 64) in;

layout(set = 0, binding = 0) readonly buffer Indices { uint idx[]; };
layout(set = 0, binding = 1) readonly buffer Updates { float upd[]; };
layout(set = 0, binding = 2) buffer Data { float data[]; };

layout(push_constant) uniform Push {
    uint n;
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) {
        atomicAdd(data[idx[i]], upd[i]);
    }
}
