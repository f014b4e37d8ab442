// empty_launch: does nothing, with the parameter list of w8a16_gemm_m16 (four pointers,
// three u32). The benchmark launches it straight through the backend to measure what
// one driver launch costs on the host: the floor under any launcher call's host cost.
extern "C" __global__ void empty_launch(const void*, const void*, const void*, void*, unsigned,
                                        unsigned, unsigned) {}
