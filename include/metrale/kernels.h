/* metrale-kernels C ABI: FP8-weight / BF16-activation decode GEMMs for NVIDIA GPUs,
 * compiled at run time with NVRTC, callable from C and from any language that calls C.
 *
 * C99; includes no CUDA header. Device addresses are CUdeviceptr values passed as
 * uint64_t; a stream is a CUstream passed as void* (NULL: the legacy default stream).
 *
 * Error model: every call that can fail returns a metrale_status. METRALE_OK is 0; on
 * any other status nothing was launched by that call (for the dense FFN with 17..32
 * rows: neither half, but for METRALE_ERROR_CUDA from the driver's refusal of the second
 * half, which leaves the first queued: a launch cannot be taken back), and
 * metrale_last_error() holds the message, the same text as the C++ library's
 * metrale::Error. No C++ exception crosses this boundary.
 *
 * Thread safety: every function may be called from many threads at once, on one
 * service or on several. metrale_last_error() is per thread.
 *
 * CUDA graphs: warm the service up (metrale_warm_up, or one call of each launcher)
 * before capturing; a first use compiles and loads a module, which a capture cannot
 * contain. */
#ifndef METRALE_KERNELS_H
#define METRALE_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* C++ callers see that no exception leaves a call. */
#ifdef __cplusplus
#define METRALE_NOEXCEPT noexcept
#else
#define METRALE_NOEXCEPT
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum metrale_status {
  METRALE_OK = 0,
  /* A NULL handle or out-pointer, a shape, stride, pointer or alignment a launcher
   * refuses, an unknown variant or target name, or an unaccepted
   * METRALE_FFN_M16_TC_NTILE. */
  METRALE_ERROR_INVALID_ARGUMENT = 1,
  /* No CUDA driver or no such device; or a compile-only service asked to launch, to
   * allocate, to copy or to synchronise. */
  METRALE_ERROR_NO_DEVICE = 2,
  /* The target cannot run the call (its ffn_m16_tc / attn_m16_tc lever is off: no BF16
   * tensor cores). */
  METRALE_ERROR_UNSUPPORTED = 3,
  /* A kernel module failed to compile (NVRTC) or to load. */
  METRALE_ERROR_COMPILE = 4,
  /* A CUDA driver call failed (launch, memory, copy, synchronisation). */
  METRALE_ERROR_CUDA = 5,
  /* Anything else (out of host memory, an unexpected failure). */
  METRALE_ERROR_INTERNAL = 6
} metrale_status;

/* "METRALE_OK", "METRALE_ERROR_INVALID_ARGUMENT", ...; "unknown status" otherwise. */
const char* metrale_status_name(metrale_status status) METRALE_NOEXCEPT;

/* The message of this thread's last call that returned a status: empty after
 * METRALE_OK. Valid until this thread's next call into the library. Never NULL. */
const char* metrale_last_error(void) METRALE_NOEXCEPT;

/* The library version, "MAJOR.MINOR.PATCH". */
const char* metrale_version(void) METRALE_NOEXCEPT;

/* ---- Service ------------------------------------------------------------------- */

typedef struct metrale_service metrale_service;

/* A service for CUDA device `device` (its primary context). *out is set to NULL on
 * failure: METRALE_ERROR_NO_DEVICE without a driver or without such a device. */
metrale_status metrale_service_create(int device, metrale_service** out) METRALE_NOEXCEPT;

/* A compile-only service for `target` ("sm_90", "90" or "9.0") on a machine that may
 * have no GPU: metrale_warm_up compiles; launches check their arguments and then return
 * METRALE_ERROR_NO_DEVICE. */
metrale_status metrale_service_create_for_target(const char* target,
                                                 metrale_service** out) METRALE_NOEXCEPT;

/* Destroys a service (NULL is ignored). Every launch on it must have been issued; the
 * kernels it loaded are unloaded, so synchronise work that uses them first. */
void metrale_service_destroy(metrale_service* service) METRALE_NOEXCEPT;

/* The compile target ("sm_90"), owned by the service. */
metrale_status metrale_service_target(const metrale_service* service,
                                      const char** out) METRALE_NOEXCEPT;

/* 1 for a compile-only service, 0 for a device service. */
metrale_status metrale_service_is_compile_only(const metrale_service* service,
                                               int* out) METRALE_NOEXCEPT;

/* Compiles and loads the named kernel variants in parallel; count 0 means every variant.
 * A name is a variant (e.g. "w8a16_gemm_m16", "fill_random") or an entry, which stands
 * for its variant (e.g. "w8a16_gemm_m16_splitk", whose kernel is the strided variant's);
 * "w8a16_gemm_m16_skinny_deep" also warms the 32-row variant that
 * metrale_w8a16_gemm_m16_skinny_deep runs above 8 tokens on some shapes. After it, the
 * launchers of those variants compile nothing. */
metrale_status metrale_warm_up(metrale_service* service, const char* const* variants,
                               size_t count) METRALE_NOEXCEPT;

/* ---- Launchers ---------------------------------------------------------------------
 * input [m, k] BF16, weight [n, k] FP8 E4M3, block_scale [ceil(n/128), k/128] FP32,
 * output [m, n] BF16, all row-major. m in 1..16, k a multiple of 128 (at least 128 for
 * every entry but the seed's three, and in the plan functions), n >= 1, input and weight
 * 16-byte aligned, block_scale 4-byte and output 2-byte aligned, the output's bytes
 * apart from the others'. Asynchronous on `stream`. */

metrale_status metrale_w8a16_gemm_m16(metrale_service* service, uint64_t input, uint64_t weight,
                                      uint64_t block_scale, uint64_t output, uint32_t m, uint32_t n,
                                      uint32_t k, void* stream) METRALE_NOEXCEPT;

/* The N_TILE=64 instantiation: same arguments and checks. */
metrale_status metrale_w8a16_gemm_m16_n64(metrale_service* service, uint64_t input, uint64_t weight,
                                          uint64_t block_scale, uint64_t output, uint32_t m,
                                          uint32_t n, uint32_t k, void* stream) METRALE_NOEXCEPT;

/* Strided rows: a_row_stride (>= k, a multiple of 8) and c_row_stride (>= n) are the
 * row pitches of input and output in elements. */
metrale_status metrale_w8a16_gemm_m16_strided(metrale_service* service, uint64_t input,
                                              uint64_t weight, uint64_t block_scale,
                                              uint64_t output, uint32_t m, uint32_t n, uint32_t k,
                                              uint32_t a_row_stride, uint32_t c_row_stride,
                                              void* stream) METRALE_NOEXCEPT;

/* Split K over a thread-block cluster of `split` CTAs per 32-column tile (1..8, and at
 * most k/128), strided rows as above; deterministic. metrale_plan_m16_gemm says which
 * entry and split suit a shape on the service's device. */
metrale_status metrale_w8a16_gemm_m16_splitk(metrale_service* service, uint64_t input,
                                             uint64_t weight, uint64_t block_scale,
                                             uint64_t output, uint32_t m, uint32_t n, uint32_t k,
                                             uint32_t a_row_stride, uint32_t c_row_stride,
                                             uint32_t split, void* stream) METRALE_NOEXCEPT;

/* Stream-K: the layer's 128-row x 128-K units split evenly over `ctas` persistent CTAs
 * (metrale_plan_m16_gemm_entry says how many for a shape), strided rows as above;
 * deterministic for a given ctas; the ring depth is the one the C++ plan gives `ctas`
 * on the service's device (streamk_plan_stages). `workspace` is device memory of
 * `workspace_bytes`, at least metrale_w8a16_gemm_m16_streamk_workspace_bytes(n, ctas),
 * 16-byte aligned, owned by the caller: zero it once before the first launch; every
 * completed launch leaves it zero. One workspace serves one stream at a time. */
metrale_status metrale_w8a16_gemm_m16_streamk(metrale_service* service, uint64_t input,
                                              uint64_t weight, uint64_t block_scale,
                                              uint64_t output, uint32_t m, uint32_t n, uint32_t k,
                                              uint32_t a_row_stride, uint32_t c_row_stride,
                                              uint64_t workspace, uint64_t workspace_bytes,
                                              uint32_t ctas, void* stream) METRALE_NOEXCEPT;

/* *bytes_out receives the workspace metrale_w8a16_gemm_m16_streamk needs for n columns
 * on `ctas` CTAs. */
metrale_status metrale_w8a16_gemm_m16_streamk_workspace_bytes(uint32_t n, uint32_t ctas,
                                                              uint64_t* bytes_out) METRALE_NOEXCEPT;

/* The skinny entry for small layers: a CTA of 8 warps per 16 weight rows and chunk of
 * 1024 K (4 warps and 512 K where K = 512), each warp one 128-K block, the chunks added in
 * a fixed order through `workspace` (strided rows as above; deterministic). `workspace` is
 * device memory of `workspace_bytes`, at least
 * metrale_w8a16_gemm_m16_skinny_workspace_bytes(n, k), 16-byte aligned, owned by the caller
 * and zeroed once before the first launch, as stream-K's (the same memory serves both, one
 * stream at a time); it may be 0 where that size is 0 (k <= 1024). */
metrale_status metrale_w8a16_gemm_m16_skinny(metrale_service* service, uint64_t input,
                                             uint64_t weight, uint64_t block_scale,
                                             uint64_t output, uint32_t m, uint32_t n, uint32_t k,
                                             uint32_t a_row_stride, uint32_t c_row_stride,
                                             uint64_t workspace, uint64_t workspace_bytes,
                                             void* stream) METRALE_NOEXCEPT;

/* *bytes_out receives the workspace metrale_w8a16_gemm_m16_skinny needs for n x k. */
metrale_status metrale_w8a16_gemm_m16_skinny_workspace_bytes(uint32_t n, uint32_t k,
                                                             uint64_t* bytes_out) METRALE_NOEXCEPT;

/* The deep skinny entry for layers of tens of MiB: one CTA per 16 weight rows covering all
 * of K (above 8 rows, where the C++ w8a16_gemm_m16_skinny_deep32_form suits the shape, one
 * per 32 rows), in the form and on the warps per CTA the C++ plan runs it on the service's
 * device where the plan picks it, else in the form the plan gives the shape
 * (w8a16_gemm_m16_skinny_deep_form), each warp its share of K's 128-K blocks one after
 * another (strided rows as above; deterministic). No workspace. */
metrale_status metrale_w8a16_gemm_m16_skinny_deep(metrale_service* service, uint64_t input,
                                                  uint64_t weight, uint64_t block_scale,
                                                  uint64_t output, uint32_t m, uint32_t n,
                                                  uint32_t k, uint32_t a_row_stride,
                                                  uint32_t c_row_stride,
                                                  void* stream) METRALE_NOEXCEPT;

/* The deep skinny entry as the C++ plan without PDL runs it (plan_m16_gemm): on narrow,
 * deep layers in chunks of K, the chunks' partials added in a fixed order through
 * `workspace`; elsewhere on one chunk, as metrale_w8a16_gemm_m16_skinny_deep (strided rows
 * as above; deterministic). `workspace` is device memory of `workspace_bytes`, at least
 * metrale_w8a16_gemm_m16_skinny_deep_chunked_workspace_bytes for the shape, 16-byte
 * aligned, owned by the caller and zeroed once before the first launch, as stream-K's (the
 * same memory serves both, one stream at a time); it may be 0 where that size is 0. */
metrale_status metrale_w8a16_gemm_m16_skinny_deep_chunked(
    metrale_service* service, uint64_t input, uint64_t weight, uint64_t block_scale,
    uint64_t output, uint32_t m, uint32_t n, uint32_t k, uint32_t a_row_stride,
    uint32_t c_row_stride, uint64_t workspace, uint64_t workspace_bytes,
    void* stream) METRALE_NOEXCEPT;

/* *bytes_out receives the workspace metrale_w8a16_gemm_m16_skinny_deep_chunked needs for
 * m x n x k on the service's device (0 where it runs one chunk). */
metrale_status metrale_w8a16_gemm_m16_skinny_deep_chunked_workspace_bytes(
    metrale_service* service, uint32_t m, uint32_t n, uint32_t k,
    uint64_t* bytes_out) METRALE_NOEXCEPT;

/* *split_out receives the split to pass to metrale_w8a16_gemm_m16_splitk, or 1 when an
 * unsplit entry suits the shape better: metrale_w8a16_gemm_m16, or above 8 rows
 * metrale_w8a16_gemm_m16_n64 once ceil(n/64) reaches 1.2 tiles per SM. It is the split
 * of the C++ plan_m16_gemm; metrale_plan_m16_gemm_entry also names the entry. The plan is
 * made for the service's device, its SMs and its peak DRAM bandwidth; a compile-only
 * service plans for 132 SMs of unknown bandwidth (as an H200). */
metrale_status metrale_plan_m16_gemm(metrale_service* service, uint32_t m, uint32_t n,
                                     uint32_t k, uint32_t* split_out) METRALE_NOEXCEPT;

/* The whole plan for a shape on the service's device: *entry_out names the C function to
 * call ("metrale_w8a16_gemm_m16", "metrale_w8a16_gemm_m16_n64",
 * "metrale_w8a16_gemm_m16_splitk", "metrale_w8a16_gemm_m16_streamk",
 * "metrale_w8a16_gemm_m16_skinny" or "metrale_w8a16_gemm_m16_skinny_deep"; a static
 * string), *split_out its split (1 unless split-K) and *ctas_out its CTAs (stream-K only,
 * else 0). Where the C++ plan picks its streaming entry, which has no C function, the plan
 * names split-K with the same split. */
metrale_status metrale_plan_m16_gemm_entry(metrale_service* service, uint32_t m, uint32_t n,
                                           uint32_t k, const char** entry_out,
                                           uint32_t* split_out, uint32_t* ctas_out) METRALE_NOEXCEPT;

/* As metrale_plan_m16_gemm_entry, for a caller that holds a workspace: the C++ plan without
 * PDL itself, which runs the deep entry in chunks of K on narrow, deep layers (under 64 MiB,
 * K of at least 8192, from tens of 16-row groups to about one per SM), up to 8 tokens on
 * layers under 16 MiB at K = 4096, 5376, 6144 and 7168, and above 8 tokens at K of 4608-8191
 * (not 5120) on more row groups than SMs (the rules and their bounds are plan_m16_gemm's);
 * there *entry_out is "metrale_w8a16_gemm_m16_skinny_deep_chunked". */
metrale_status metrale_plan_m16_gemm_entry_chunked(metrale_service* service, uint32_t m,
                                                   uint32_t n, uint32_t k,
                                                   const char** entry_out, uint32_t* split_out,
                                                   uint32_t* ctas_out) METRALE_NOEXCEPT;

/* The automatic choice in one call: the entry the C++ plan_m16_gemm picks for m x n x k on
 * the service's device (its SMs and DRAM bandwidth; 132 SMs of unknown bandwidth on a
 * compile-only service), launched as its launcher
 * launches it, with programmatic dependent launch where `programmatic_dependent` is
 * non-zero (the caller's preceding kernel must be PDL-aware; the plan then is the one for
 * PDL launches). Strided rows as metrale_w8a16_gemm_m16_strided. `workspace`: device memory
 * of `workspace_bytes`, at least metrale_w8a16_gemm_m16_auto_workspace_bytes for the same
 * arguments, 16-byte aligned, zeroed once before the first launch and left zero by every
 * launch, one stream at a time (the same memory serves stream-K and the skinny entries);
 * it may be 0 where that size is 0. Every argument is checked before anything is compiled
 * or launched. Deterministic for a device, shape and launch mode. */
metrale_status metrale_w8a16_gemm_m16_auto(metrale_service* service, uint64_t input,
                                           uint64_t weight, uint64_t block_scale, uint64_t output,
                                           uint32_t m, uint32_t n, uint32_t k,
                                           uint32_t a_row_stride, uint32_t c_row_stride,
                                           uint64_t workspace, uint64_t workspace_bytes,
                                           int programmatic_dependent,
                                           void* stream) METRALE_NOEXCEPT;

/* *bytes_out receives the workspace metrale_w8a16_gemm_m16_auto needs for m x n x k on the
 * service's device with or without programmatic dependent launch (0 where its plan needs
 * none). */
metrale_status metrale_w8a16_gemm_m16_auto_workspace_bytes(metrale_service* service, uint32_t m,
                                                           uint32_t n, uint32_t k,
                                                           int programmatic_dependent,
                                                           uint64_t* bytes_out) METRALE_NOEXCEPT;

/* The scalar reference (FP32 sequential accumulation, one BF16 round), for checking
 * the tensor-core launchers with metrale_within_m16_tc_budget. */
metrale_status metrale_w8a16_gemv_batch16(metrale_service* service, uint64_t input, uint64_t weight,
                                          uint64_t block_scale, uint64_t output, uint32_t m,
                                          uint32_t n, uint32_t k, void* stream) METRALE_NOEXCEPT;

metrale_status metrale_w8a16_gemv_batch16_strided(metrale_service* service, uint64_t input,
                                                  uint64_t weight, uint64_t block_scale,
                                                  uint64_t output, uint32_t m, uint32_t n,
                                                  uint32_t k, uint32_t a_row_stride,
                                                  uint32_t c_row_stride,
                                                  void* stream) METRALE_NOEXCEPT;

/* ---- Dense FFN and QKV ----------------------------------------------------------- */

/* The dense-FFN N tile chosen by METRALE_FFN_M16_TC_NTILE (unset or "32": 32, "64":
 * 64; any other value: METRALE_ERROR_INVALID_ARGUMENT). On a device service it also
 * loads the chosen kernel. Select once, then pass the tile to metrale_dense_ffn. */
metrale_status metrale_dense_ffn_select(metrale_service* service,
                                        uint32_t* n_tile) METRALE_NOEXCEPT;

/* The dense FFN projection for 1..32 rows (17..32 rows: two launches on the two
 * contiguous row halves, the first ceil(rows / 2) rows, then the rest), with the N tile
 * from metrale_dense_ffn_select. */
metrale_status metrale_dense_ffn(metrale_service* service, uint32_t n_tile, uint64_t input,
                                 uint64_t weight, uint64_t block_scale, uint64_t output,
                                 uint32_t rows, uint32_t n, uint32_t k,
                                 void* stream) METRALE_NOEXCEPT;

/* One projection (Q, K or V) of the multi-sequence decode QKV buffer
 * qkv [n_seq, per_seq_qkv] BF16: rows 0..n_seq of the columns
 * [slot_offset, slot_offset + slot_width); input [n_seq, input_row_stride] BF16,
 * weight [slot_width, k]. n_seq in 1..16. */
metrale_status metrale_qkv_projection(metrale_service* service, uint64_t input,
                                      uint32_t input_row_stride, uint64_t weight,
                                      uint64_t block_scale, uint64_t qkv, uint32_t per_seq_qkv,
                                      uint32_t slot_offset, uint32_t slot_width, uint32_t n_seq,
                                      uint32_t k, void* stream) METRALE_NOEXCEPT;

/* ---- Test data and memory (for examples and checks; engines use their own) ------- */

/* Reproducible pseudo-random fills on `stream`: BF16 uniform in [-scale, scale); E4M3
 * codes of magnitude code <= max_magnitude (0x7E: every finite value), random sign,
 * never NaN; FP32 uniform in [lo, hi). */
metrale_status metrale_fill_random_bf16(metrale_service* service, uint64_t out, uint32_t count,
                                        uint32_t seed, float scale, void* stream) METRALE_NOEXCEPT;
metrale_status metrale_fill_random_fp8(metrale_service* service, uint64_t out, uint32_t count,
                                       uint32_t seed, uint32_t max_magnitude,
                                       void* stream) METRALE_NOEXCEPT;
metrale_status metrale_fill_random_f32(metrale_service* service, uint64_t out, uint32_t count,
                                       uint32_t seed, float lo, float hi,
                                       void* stream) METRALE_NOEXCEPT;

/* Device memory of the service's device (cuMemAlloc / cuMemFree). */
metrale_status metrale_alloc(metrale_service* service, size_t bytes,
                             uint64_t* out) METRALE_NOEXCEPT;
metrale_status metrale_free(metrale_service* service, uint64_t ptr) METRALE_NOEXCEPT;
/* Synchronous copies (cuMemcpyHtoD / cuMemcpyDtoH). */
metrale_status metrale_upload(metrale_service* service, uint64_t dst, const void* src,
                              size_t bytes) METRALE_NOEXCEPT;
metrale_status metrale_download(metrale_service* service, void* dst, uint64_t src,
                                size_t bytes) METRALE_NOEXCEPT;
/* Waits for all work on the service's device context. */
metrale_status metrale_synchronize(metrale_service* service) METRALE_NOEXCEPT;

/* ---- Numerics for checks --------------------------------------------------------- */

float metrale_bf16_to_float(uint16_t bits) METRALE_NOEXCEPT;

/* 1 when `got` is within the tensor-core accuracy budget of the scalar reference `ref`
 * (at most 2 BF16 ULP, or an absolute error under the floor for depth k and the
 * reference row's RMS), else 0. NaN never passes. */
int metrale_within_m16_tc_budget(float got, float ref, uint32_t k, double row_rms) METRALE_NOEXCEPT;

/* ---- Logging --------------------------------------------------------------------- */

/* Levels, as METRALE_LOG_LEVEL names them. */
typedef enum metrale_log_level {
  METRALE_LOG_TRACE = 0,
  METRALE_LOG_DEBUG = 1,
  METRALE_LOG_INFO = 2,
  METRALE_LOG_WARN = 3,
  METRALE_LOG_ERROR = 4,
  METRALE_LOG_CRITICAL = 5,
  METRALE_LOG_OFF = 6
} metrale_log_level;

/* Receives each message at or above the logger's level: `level` is a metrale_log_level,
 * `message` the text without time or level prefix (valid during the call only). Never
 * called concurrently with itself; it must not call back into the library. */
typedef void (*metrale_log_callback)(int level, const char* message, void* user);

/* Routes the library's log to `callback` instead of stderr (replacing an earlier
 * callback, which is not called again once this returns), keeping the current level;
 * NULL restores the default stderr logger. */
metrale_status metrale_set_log_callback(metrale_log_callback callback, void* user) METRALE_NOEXCEPT;

/* The logger's level (default: METRALE_LOG_LEVEL, else warn). */
metrale_status metrale_set_log_level(int level) METRALE_NOEXCEPT;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* METRALE_KERNELS_H */
