/* The engine_cpp example through the C ABI, in C99: create a service, warm it up, run
 * the dense FFN for 1..32 rows, the strided QKV projection and two attention projections
 * through the automatic choice (with and without PDL), and check each against the scalar
 * reference kernel within the tensor-core budget.
 *
 *   engine_c [DEVICE]     exit 0: checks passed, 1: a check or a call failed,
 *                         2: a bad argument (the usage is printed),
 *                         77: no CUDA device (the reason is printed) */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <metrale/kernels.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_DEVICE 77
#define BAD_ARGUMENT 2

/* Every call is checked; the first failure ends the program with the library's message. */
#define CHECK_CALL(call)                                                                    \
  do {                                                                                      \
    metrale_status status_ = (call);                                                        \
    if (status_ != METRALE_OK) {                                                            \
      fprintf(stderr, "engine_c: %s failed: %s: %s\n", #call, metrale_status_name(status_), \
              metrale_last_error());                                                        \
      exit(1);                                                                              \
    }                                                                                       \
  } while (0)

static metrale_service* g_service;

/* Log lines go wherever the engine sends its own; here, stderr with a prefix. */
static void on_log(int level, const char* message, void* user) {
  (void)user;
  fprintf(stderr, "[metrale log %d] %s\n", level, message);
}

static uint64_t device_alloc(size_t bytes) {
  uint64_t p = 0;
  CHECK_CALL(metrale_alloc(g_service, bytes, &p));
  return p;
}

/* BF16 NaN everywhere: an output the kernel fails to write can never pass the check. */
static void poison(uint64_t p, size_t count) {
  uint16_t* host = malloc(count * sizeof *host);
  size_t i;
  if (host == NULL) exit(1);
  for (i = 0; i < count; ++i) host[i] = 0xFFFF;
  CHECK_CALL(metrale_upload(g_service, p, host, count * sizeof *host));
  free(host);
}

static uint16_t* download(uint64_t p, size_t count) {
  uint16_t* host = malloc(count * sizeof *host);
  if (host == NULL) exit(1);
  CHECK_CALL(metrale_download(g_service, host, p, count * sizeof *host));
  return host;
}

/* One FP8 weight [n, k] with its block scales [ceil(n/128), k/128]. */
typedef struct {
  uint32_t n, k;
  uint64_t codes, scales;
} weight;

static weight make_weight(uint32_t n, uint32_t k, uint32_t seed) {
  weight w;
  const uint32_t n_scales = (n + 127) / 128 * (k / 128);
  w.n = n;
  w.k = k;
  w.codes = device_alloc((size_t)n * k);
  w.scales = device_alloc((size_t)n_scales * 4);
  CHECK_CALL(metrale_fill_random_fp8(g_service, w.codes, n * k, seed, 0x7E, NULL));
  CHECK_CALL(metrale_fill_random_f32(g_service, w.scales, n_scales, seed + 1, 1.0f / 512,
                                     1.0f / 128, NULL));
  return w;
}

static void free_weight(weight* w) {
  CHECK_CALL(metrale_free(g_service, w->codes));
  CHECK_CALL(metrale_free(g_service, w->scales));
}

typedef struct {
  unsigned long long checked, failures;
} tally;

/* Compares `rows` rows of `cols` BF16 values (pitch `pitch`) within the budget. */
static void check(tally* t, const uint16_t* got, const uint16_t* ref, uint32_t rows, uint32_t pitch,
                  uint32_t cols, uint32_t k, const char* what) {
  uint32_t r, c;
  for (r = 0; r < rows; ++r) {
    const uint16_t* g = got + (size_t)r * pitch;
    const uint16_t* e = ref + (size_t)r * pitch;
    double sum_sq = 0.0, rms;
    for (c = 0; c < cols; ++c) {
      const double v = metrale_bf16_to_float(e[c]);
      sum_sq += v * v;
    }
    rms = sqrt(sum_sq / cols);
    for (c = 0; c < cols; ++c) {
      const float gv = metrale_bf16_to_float(g[c]);
      const float ev = metrale_bf16_to_float(e[c]);
      ++t->checked;
      if (!metrale_within_m16_tc_budget(gv, ev, k, rms) && t->failures++ == 0) {
        printf("  first failure: %s: row %u column %u: got %g, reference %g\n", what, (unsigned)r,
               (unsigned)c, (double)gv, (double)ev);
      }
    }
  }
}

/* Waits for the service's work, then checks `rows` rows of `out` against `ref` (pitch and
 * width `cols`) as check() does. */
static void check_outputs(tally* t, uint64_t out, uint64_t ref, uint32_t rows, uint32_t cols,
                          uint32_t k, const char* what) {
  uint16_t *got, *expect;
  CHECK_CALL(metrale_synchronize(g_service));
  got = download(out, (size_t)rows * cols);
  expect = download(ref, (size_t)rows * cols);
  check(t, got, expect, rows, cols, cols, k, what);
  free(got);
  free(expect);
}

static int report(const char* name, const tally* t) {
  printf("%-34s %10llu outputs, %llu outside the budget\n", name, t->checked, t->failures);
  return t->failures == 0 && t->checked > 0;
}

/* Dense FFN projection for every row count 1..32 against the scalar reference. */
static int run_dense_ffn(void) {
  enum { N = 2048, K = 4096, MAX_ROWS = 32 };
  uint32_t n_tile = 0, rows, r0;
  tally t = {0, 0};
  char name[64];
  weight w = make_weight(N, K, 11);
  const uint64_t input = device_alloc((size_t)MAX_ROWS * K * 2);
  const uint64_t out = device_alloc((size_t)MAX_ROWS * N * 2);
  const uint64_t ref = device_alloc((size_t)MAX_ROWS * N * 2);

  /* Select once (METRALE_FFN_M16_TC_NTILE), then pass the tile to every call. */
  CHECK_CALL(metrale_dense_ffn_select(g_service, &n_tile));
  CHECK_CALL(metrale_fill_random_bf16(g_service, input, MAX_ROWS * K, 7, 1.0f, NULL));
  for (rows = 1; rows <= MAX_ROWS; ++rows) {
    char what[32];
    poison(out, (size_t)rows * N);
    poison(ref, (size_t)rows * N);
    CHECK_CALL(
        metrale_dense_ffn(g_service, n_tile, input, w.codes, w.scales, out, rows, N, K, NULL));
    for (r0 = 0; r0 < rows; r0 += 16) { /* the reference takes 16 rows a call */
      const uint32_t m = rows - r0 < 16 ? rows - r0 : 16;
      CHECK_CALL(metrale_w8a16_gemv_batch16(g_service, input + (uint64_t)r0 * K * 2, w.codes,
                                            w.scales, ref + (uint64_t)r0 * N * 2, m, N, K, NULL));
    }
    snprintf(what, sizeof what, "dense FFN, %u rows", (unsigned)rows);
    check_outputs(&t, out, ref, rows, N, K, what);
  }
  CHECK_CALL(metrale_free(g_service, input));
  CHECK_CALL(metrale_free(g_service, out));
  CHECK_CALL(metrale_free(g_service, ref));
  free_weight(&w);
  snprintf(name, sizeof name, "dense FFN N=2048 K=4096 tile %u", (unsigned)n_tile);
  return report(name, &t);
}

/* Q, K and V projections of a multi-sequence decode step into one strided QKV buffer. */
static int run_qkv(void) {
  enum { K = 2048, STRIDE = K + 64, Q = 2048, KV = 256, PER_SEQ = Q + 2 * KV, MAX_SEQ = 16 };
  static const uint32_t offsets[3] = {0, Q, Q + KV};
  static const uint32_t widths[3] = {Q, KV, KV};
  static const uint32_t seqs[4] = {1, 3, 8, 16};
  weight w[3];
  tally t = {0, 0};
  uint64_t input, qkv, ref;
  int i, s;
  w[0] = make_weight(Q, K, 21);
  w[1] = make_weight(KV, K, 23);
  w[2] = make_weight(KV, K, 25);
  input = device_alloc((size_t)MAX_SEQ * STRIDE * 2);
  qkv = device_alloc((size_t)MAX_SEQ * PER_SEQ * 2);
  ref = device_alloc((size_t)MAX_SEQ * PER_SEQ * 2);
  CHECK_CALL(metrale_fill_random_bf16(g_service, input, MAX_SEQ * STRIDE, 9, 1.0f, NULL));
  for (s = 0; s < 4; ++s) {
    const uint32_t n_seq = seqs[s];
    char what[32];
    poison(qkv, (size_t)n_seq * PER_SEQ);
    poison(ref, (size_t)n_seq * PER_SEQ);
    for (i = 0; i < 3; ++i) {
      CHECK_CALL(metrale_qkv_projection(g_service, input, STRIDE, w[i].codes, w[i].scales, qkv,
                                        PER_SEQ, offsets[i], widths[i], n_seq, K, NULL));
      CHECK_CALL(metrale_w8a16_gemv_batch16_strided(g_service, input, w[i].codes, w[i].scales,
                                                    ref + (uint64_t)offsets[i] * 2, n_seq,
                                                    widths[i], K, STRIDE, PER_SEQ, NULL));
    }
    snprintf(what, sizeof what, "QKV, %u sequences", (unsigned)n_seq);
    check_outputs(&t, qkv, ref, n_seq, PER_SEQ, K, what);
  }
  CHECK_CALL(metrale_free(g_service, input));
  CHECK_CALL(metrale_free(g_service, qkv));
  CHECK_CALL(metrale_free(g_service, ref));
  for (i = 0; i < 3; ++i) free_weight(&w[i]);
  return report("QKV strided Q2048+K256+V256 K=2048", &t);
}

/* DeepSeek-V3's q_a and kv_a projections (1536 and 576 x 7168) through the automatic
 * choice, with programmatic dependent launch where `pdl`, on one workspace sized for the
 * largest plan and zeroed once. */
static int run_auto(int pdl) {
  enum { K = 7168, MAX_ROWS = 16 };
  static const uint32_t widths[2] = {1536, 576};
  static const uint32_t token_counts[4] = {1, 4, 8, 16};
  weight w[2];
  tally t = {0, 0};
  uint64_t input, out, ref, workspace, ws_bytes = 16, need = 0;
  uint8_t* zeros;
  int i, j;
  w[0] = make_weight(widths[0], K, 31);
  w[1] = make_weight(widths[1], K, 33);
  for (i = 0; i < 2; ++i) {
    for (j = 1; j <= MAX_ROWS; ++j) {
      CHECK_CALL(metrale_w8a16_gemm_m16_auto_workspace_bytes(g_service, (uint32_t)j, widths[i],
                                                             K, pdl, &need));
      if (need > ws_bytes) ws_bytes = need;
    }
  }
  workspace = device_alloc((size_t)ws_bytes);
  zeros = calloc((size_t)ws_bytes, 1);
  if (zeros == NULL) exit(1);
  CHECK_CALL(metrale_upload(g_service, workspace, zeros, (size_t)ws_bytes));
  free(zeros);
  input = device_alloc((size_t)MAX_ROWS * K * 2);
  out = device_alloc((size_t)MAX_ROWS * 1536 * 2);
  ref = device_alloc((size_t)MAX_ROWS * 1536 * 2);
  CHECK_CALL(metrale_fill_random_bf16(g_service, input, MAX_ROWS * K, 13, 1.0f, NULL));
  for (i = 0; i < 2; ++i) {
    for (j = 0; j < 4; ++j) {
      const uint32_t n = widths[i], m = token_counts[j];
      char what[48];
      poison(out, (size_t)m * n);
      poison(ref, (size_t)m * n);
      CHECK_CALL(metrale_w8a16_gemm_m16_auto(g_service, input, w[i].codes, w[i].scales, out, m,
                                             n, K, K, n, workspace, ws_bytes, pdl, NULL));
      CHECK_CALL(metrale_w8a16_gemv_batch16(g_service, input, w[i].codes, w[i].scales, ref, m,
                                            n, K, NULL));
      snprintf(what, sizeof what, "auto %u x 7168, %u tokens", (unsigned)n, (unsigned)m);
      check_outputs(&t, out, ref, m, n, K, what);
    }
  }
  CHECK_CALL(metrale_free(g_service, input));
  CHECK_CALL(metrale_free(g_service, out));
  CHECK_CALL(metrale_free(g_service, ref));
  CHECK_CALL(metrale_free(g_service, workspace));
  for (i = 0; i < 2; ++i) free_weight(&w[i]);
  return report(pdl ? "auto q_a / kv_a x 7168, PDL" : "auto q_a / kv_a x 7168", &t);
}

static void usage(FILE* to) {
  fprintf(to, "usage: engine_c [DEVICE]   (DEVICE: CUDA device ordinal, default 0)\n");
}

/* The whole of `text` as an ordinal in 0..INT_MAX: atoi would take "--help" or "1x" for a
 * device and run on the wrong one. */
static int parse_device(const char* text, int* device) {
  char* end = NULL;
  long value;
  if (text[0] < '0' || text[0] > '9') return 0;
  errno = 0;
  value = strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || value > INT_MAX) return 0;
  *device = (int)value;
  return 1;
}

int main(int argc, char** argv) {
  int device = 0;
  const char* target = NULL;
  metrale_status status;
  int ok;

  /* Arguments first: a bad one is the caller's mistake whether or not a GPU is here. */
  if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    usage(stdout);
    return 0;
  }
  if (argc > 2 || (argc == 2 && !parse_device(argv[1], &device))) {
    fprintf(stderr, "engine_c: bad argument '%s'\n", argv[argc > 2 ? 2 : 1]);
    usage(stderr);
    return BAD_ARGUMENT;
  }

  CHECK_CALL(metrale_set_log_callback(on_log, NULL));
  status = metrale_service_create(device, &g_service);
  if (status == METRALE_ERROR_NO_DEVICE) {
    const char* why = metrale_last_error();
    printf("%s%s\n", strncmp(why, "no CUDA device", 14) == 0 ? "" : "no CUDA device: ", why);
    return NO_DEVICE;
  }
  CHECK_CALL(status);
  CHECK_CALL(metrale_service_target(g_service, &target));
  printf("metrale engine_c %s: device %d (%s)\n", metrale_version(), device, target);

  /* Compile every kernel before serving (count 0: all variants). */
  CHECK_CALL(metrale_warm_up(g_service, NULL, 0));
  ok = run_dense_ffn();
  ok = run_qkv() && ok;
  ok = run_auto(0) && ok;
  ok = run_auto(1) && ok;
  metrale_service_destroy(g_service);
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
