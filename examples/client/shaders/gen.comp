#version 450
// The client's producer: writes the table's starting values, the indices
// (rows of the table, a few of them hot, some counted from the end) and
// the update rows, all from a hash of the position, so that the host can
// compute the same inputs for the CPU reference without reading them.
layout(local_size_x = 64) in;

layout(set = 0, binding = 0) writeonly buffer Table { float table[]; };
layout(set = 0, binding = 1) writeonly buffer Indices { int indices[]; };
layout(set = 0, binding = 2) writeonly buffer Updates { float updates[]; };

layout(push_constant) uniform Push {
    uint rows;
    uint cols;
    uint n;
    uint seed;
} pc;

// hash is lowbias32 (Chris Wellons' integer hash).
uint hash(uint x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

// value maps a hash to a float in [-1, 1) with 24 significant bits, exact.
float value(uint h) {
    return float(h >> 8) * (1.0 / 8388608.0) - 1.0;
}

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.rows * pc.cols) {
        table[i] = value(hash(i ^ pc.seed));
    }
    if (i < pc.n) {
        uint h = hash(i + 0x9e3779b9u * pc.seed);
        // A quarter of the updates go to the first eight rows.
        int row = int((h & 3u) == 0u ? (h >> 2) % 8u : (h >> 2) % pc.rows);
        // A quarter of the rest count from the end: -rows <= index < 0.
        if ((h >> 30) == 1u && (h & 3u) != 0u) {
            row -= int(pc.rows);
        }
        indices[i] = row;
    }
    if (i < pc.n * pc.cols) {
        updates[i] = value(hash(i ^ (pc.seed * 0x85ebca6bu) ^ 0xc2b2ae35u));
    }
}
