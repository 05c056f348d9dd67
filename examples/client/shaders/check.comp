#version 450
// The client's consumer: copies the table into the host-visible read-back
// buffer and sums each row in order.
layout(local_size_x = 64) in;

layout(set = 0, binding = 0) readonly buffer Table { float table[]; };
layout(set = 0, binding = 1) writeonly buffer Copy { float copy[]; };
layout(set = 0, binding = 2) writeonly buffer Sums { float sums[]; };

layout(push_constant) uniform Push {
    uint rows;
    uint cols;
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.rows * pc.cols) {
        copy[i] = table[i];
    }
    if (i < pc.rows) {
        float s = 0.0;
        for (uint c = 0u; c < pc.cols; c++) {
            s += table[i * pc.cols + c];
        }
        sums[i] = s;
    }
}
