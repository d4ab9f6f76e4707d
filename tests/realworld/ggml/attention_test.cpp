// llama.cpp's Metal backend (ggml's src/ggml-metal/ggml-metal.metal):
// flash attention (GGML_OP_FLASH_ATTN_EXT), the prompt kernel of 8 x 8
// simdgroup matrices with its mask pre-pass, the decode kernel split over
// 32 workgroups with its reduction, the padding of a KV length that is not
// a whole number of chunks, and a q8_0 KV cache, both dequantized to half
// first (a prompt) and read as it is (a decode step). Each sequence of
// kernels runs as ggml's host dispatches it (ggml-metal-ops.cpp,
// ggml_metal_op_flash_attn_ext and its _use_vec, _use_kv_f16 and
// _extra_pad / _extra_blk / _extra_tmp; ggml-metal-device.cpp,
// ggml_metal_library_get_pipeline_flash_attn_ext*), checked against a
// reference written here from what attention means, in double. support.h
// says where ggml's snapshot comes from.
//
// The host puts its scratch areas (the padded KV tail, the mask's block
// map, the decode kernel's per-workgroup partials, the dequantized K and V)
// after dst in dst's MTLBuffer, each at its own offset and bound on its
// own; no kernel reaches from one into another, so here each is a buffer of
// the size the host reserves for it. Each dispatch is a harness of its own
// (one pipeline each), the bytes one writes copied into the next.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "isa/numeric.h"
#include "tests/realworld/ggml/support.h"

namespace mtlemu::ggml {
namespace {

using testing::KernelHarness;
using testing::RunsThreadgroups;

// --- the kargs structs (ggml-metal-impl.h) --------------------------------

// ggml_metal_kargs_flash_attn_ext_kv_f16.
struct GgmlKargsFlashAttnExtKvF16 {
  int32_t ne0, ne1, ne2, ne3;
  uint64_t nb0, nb1, nb2, nb3;
  int32_t nblocks;
};

// ggml_metal_kargs_flash_attn_ext_pad.
struct GgmlKargsFlashAttnExtPad {
  int32_t ne11, ne_12_2, ne_12_3;
  uint64_t nb11, nb12, nb13;
  uint64_t nb21, nb22, nb23;
  int32_t ne31, ne32, ne33;
  uint64_t nb31, nb32, nb33;
};

// ggml_metal_kargs_flash_attn_ext_blk.
struct GgmlKargsFlashAttnExtBlk {
  int32_t ne01, ne30, ne31, ne32, ne33;
  uint64_t nb31, nb32, nb33;
};

// ggml_metal_kargs_flash_attn_ext and ggml_metal_kargs_flash_attn_ext_vec
// (the same fields).
struct GgmlKargsFlashAttnExt {
  int32_t ne01, ne02, ne03;
  uint64_t nb01, nb02, nb03;
  int32_t ne11, ne_12_2, ne_12_3;
  int32_t ns10;
  uint64_t nb11, nb12, nb13;
  int32_t ns20;
  uint64_t nb21, nb22, nb23;
  int32_t ne31, ne32, ne33;
  uint64_t nb31, nb32, nb33;
  int32_t ne1, ne2, ne3;
  float scale, max_bias, m0, m1;
  int32_t n_head_log2;
  float logit_softcap;
};

// ggml_metal_kargs_flash_attn_ext_vec_reduce.
struct GgmlKargsFlashAttnExtVecReduce {
  int32_t nrows;
};

// OP_FLASH_ATTN_EXT_NQPSG / _NCPSG (queries per threadgroup, KV entries a
// chunk) of the prompt kernel; OP_FLASH_ATTN_EXT_VEC_NCPSG of the decode
// kernel.
constexpr int64_t kNqptg = 8, kNcpsg = 64, kVecNcpsg = 32;

uint64_t Pad(uint64_t x, uint64_t n) { return (x + n - 1) / n * n; }
std::string Bool(bool b) { return b ? "true" : "false"; }

// --- the reference ------------------------------------------------------

struct Attention {
  std::string kv = "f16";  // the KV cache's type: f16 or q8_0
  int64_t dk = 64, dv = 64;
  int64_t n_q = 32;       // ne01: the batch's tokens
  int64_t n_head = 4;     // ne02
  int64_t n_head_kv = 4;  // ne12 = ne22 (fewer: grouped-query attention)
  int64_t n_kv = 256;     // ne11 = ne21 = ne30
  bool mask = true;       // causal: query i sits at n_kv - n_q + i
  int64_t window = 0;     // and sees only its last `window` keys (0: all)
  bool sinks = false;     // a logit per head that takes part in the softmax
  float max_bias = 0.0f;  // ALiBi
  float softcap = 0.0f;   // logit soft-capping
};

// out[i][h] = sum over j of softmax_j(l_j) v[j][g], g = h / (n_head /
// n_head_kv) the KV head of query head h, l_j = scale q[i][h] . k[j][g],
// soft-capped (softcap tanh(l / softcap)), plus the slope of h times
// mask[i][j]; a sink adds exp(sink[h]) to the softmax's denominator.
// q is [n_q][n_head][dk], k and v [n_kv][n_head_kv][d] and the output
// [n_q][n_head][dv], as llama.cpp lays them out.
std::vector<double> AttentionReference(const Attention& a, double scale,
                                       const std::vector<float>& q,
                                       const std::vector<float>& k,
                                       const std::vector<float>& v,
                                       const std::vector<float>& mask,
                                       const std::vector<float>& sinks) {
  std::vector<double> out(a.n_q * a.n_head * a.dv, 0.0);
  std::vector<double> l(a.n_kv);
  for (int64_t i = 0; i < a.n_q; ++i) {
    for (int64_t h = 0; h < a.n_head; ++h) {
      const int64_t g = h / (a.n_head / a.n_head_kv);
      const double slope = AlibiSlope(h, a.n_head, a.max_bias);
      const float* qi = &q[(i * a.n_head + h) * a.dk];
      double top = a.sinks ? sinks[h] : -HUGE_VAL;
      for (int64_t j = 0; j < a.n_kv; ++j) {
        const float* kj = &k[(j * a.n_head_kv + g) * a.dk];
        double dot = 0;
        for (int64_t d = 0; d < a.dk; ++d) dot += double(qi[d]) * kj[d];
        l[j] = scale * dot;
        if (a.softcap != 0) l[j] = a.softcap * std::tanh(l[j] / a.softcap);
        if (a.mask) l[j] += slope * mask[i * a.n_kv + j];
        top = std::max(top, l[j]);
      }
      double sum = a.sinks ? std::exp(sinks[h] - top) : 0.0;
      double* o = &out[(i * a.n_head + h) * a.dv];
      for (int64_t j = 0; j < a.n_kv; ++j) {
        const double p = std::exp(l[j] - top);
        sum += p;
        const float* vj = &v[(j * a.n_head_kv + g) * a.dv];
        for (int64_t d = 0; d < a.dv; ++d) o[d] += p * vj[d];
      }
      for (int64_t d = 0; d < a.dv; ++d) o[d] /= sum;
    }
  }
  return out;
}

// n_q rows of n_kv halves: 0 (or, with ALiBi, minus the distance from the
// query to the key, as llama.cpp fills it) where query i sees key j, -inf
// where it does not.
std::vector<float> CausalMask(const Attention& a) {
  std::vector<float> m(a.n_q * a.n_kv);
  for (int64_t i = 0; i < a.n_q; ++i) {
    const int64_t pos = a.n_kv - a.n_q + i;
    for (int64_t j = 0; j < a.n_kv; ++j) {
      const bool seen = j <= pos && (a.window == 0 || j > pos - a.window);
      m[i * a.n_kv + j] = !seen ? -std::numeric_limits<float>::infinity()
                          : a.max_bias != 0 ? -static_cast<float>(pos - j)
                                            : 0.0f;
    }
  }
  return m;
}

// `rows` rows of `d` values of `kv` (f16 or q8_0) in [-2, 2]: their bytes
// and what they mean. A q8_0 block (ggml-common.h: half d; int8 qs[32];
// value qs[i] d) gets the scale that takes its largest value to 127.
struct Kv {
  std::vector<uint8_t> bytes;
  std::vector<float> values;
  uint64_t nb0 = 0;  // ggml's nb[0]: an element's (a block's) bytes
  uint64_t row = 0;  // the bytes of a row of d values
};
Kv RandomKv(const std::string& kv, int64_t d, int64_t rows, uint32_t seed) {
  const std::vector<float> x = Random(d * rows, seed);
  Kv out;
  if (kv == "f16") {
    out.bytes = Bytes(ToHalf(x));
    out.values = RoundedToHalf(x);
    out.nb0 = 2;
    out.row = 2 * d;
    return out;
  }
  const BlockType& q8 = BlockTypeNamed("q8_0");
  out.nb0 = q8.bytes;
  out.row = q8.BytesOf(d);
  out.bytes.resize(q8.BytesOf(d * rows));
  for (size_t b = 0; b < x.size() / 32; ++b) {
    uint8_t* p = &out.bytes[b * q8.bytes];
    float amax = 0;
    for (int i = 0; i < 32; ++i) {
      amax = std::max(amax, std::fabs(x[32 * b + i]));
    }
    const uint16_t dh = isa::FloatToHalfBits(amax / 127);
    std::memcpy(p, &dh, 2);
    const float scale = isa::HalfBitsToFloat(dh);
    for (int i = 0; i < 32; ++i) {
      const long code = std::lround(x[32 * b + i] / scale);
      p[2 + i] = static_cast<uint8_t>(
          static_cast<int8_t>(std::clamp<long>(code, -127, 127)));
    }
  }
  out.values = Decode(q8, out.bytes);
  return out;
}

// Runs `h` on `groups` threadgroups of `threads` and copies out the bytes
// of its buffer at `index`.
::testing::AssertionResult RunAndRead(KernelHarness& h, MTLSize groups,
                                      MTLSize threads, int index,
                                      std::vector<uint8_t>& out) {
  ::testing::AssertionResult ran = RunsThreadgroups(h, groups, threads);
  if (ran) out = h.Read<uint8_t>(index);
  return ran;
}

// --- ggml_metal_op_flash_attn_ext ------------------------------------------
// _use_vec: the decode kernel where ne01 < 20 (and ne00 % 32 == 0), else
// the prompt kernel. _use_kv_f16: a quantized K/V with ne01 >= 32 is first
// dequantized to contiguous half, K and V in turn, by
// kernel_flash_attn_ext_kv_TYPE_f16 (kargs at 0, src at 1, dst at 2;
// ceil(nblocks / nth) threadgroups of nth = min(max, 256)), and the
// attention then reads f16 with the strides of that copy.
// has_kvpad (ne11 % ncpsg != 0, ncpsg 64 or the decode kernel's 32):
// kernel_flash_attn_ext_pad (FC_FLASH_ATTN_EXT_PAD + 0 has_mask, + 25
// ncpsg; kargs, k, v, mask, pad at 0..4; ncpsg x max(ne12, ne32) x
// max(ne13, ne33) threadgroups of 32) copies the last partial chunk of K,
// V and the mask into the pad area, whose size is _extra_pad's, always for
// ncpsg 64: 64 (nb11 ne12 ne13 + nb21 ne22 ne23 + 2 ne31 ne32 ne33).
//
// The prompt kernel: with a mask, kernel_flash_attn_ext_blk
// (FC_FLASH_ATTN_EXT_BLK + 24 nqptg 8, + 25 ncpsg 64; kargs, mask, blk at
// 0..2; nblk0 = ceil(ne30 / 64) x nblk1 = ceil(ne01 / 8) x ne32 ne33
// threadgroups of 32) marks each 8 x 64 block of the mask masked, mixed or
// zero, into _extra_blk's pad(nblk0 nblk1 ne32 ne33, 32) bytes; then
// kernel_flash_attn_ext_TYPE_dkDK_dvDV (FC_FLASH_ATTN_EXT + 0 has_mask, + 1
// has_sinks, + 2 has_bias, + 3 has_scap, + 4 has_kvpad, + 10 bc_mask
// (ne31 % 8 != 0), + 20 ns10 = nb11 / nb10, + 21 ns20, + 22 nsg = ne00 >=
// 512 ? 8 : 4; kargs, q, k, v, mask, sinks, pad, blk, dst at 0..8; the
// mask and the sinks, where absent, are src0) on ceil(ne01 / 8) x ne02 x
// ne03 threadgroups of 32 x nsg with FATTN_SMEM(nsg) = pad((8 (ne00 + 2
// pad(ne20, 64) + 4 ncpsg) + is_q 16 32 nsg) 2, 16) bytes of threadgroup
// memory.
//
// The decode kernel: nwg = 32 workgroups, nsg = 1 doubled (to 4 at most)
// while 2 nwg nsg 32 < ne11; kernel_flash_attn_ext_vec_TYPE_dkDK_dvDV
// (FC_FLASH_ATTN_EXT_VEC + 0..4 as above, + 20 ns10, + 21 ns20, + 22 nsg,
// + 23 nwg; kargs, q, k, v, mask, sinks, pad, tmp at 0..7) on ne01 x ne02
// x ne03 nwg threadgroups of 32 x nsg with pad((pad(ne00, 128) + 4 32 + 2
// pad(ne20, 128)) nsg 2, 16) bytes, into _extra_tmp's 4 min(ne01, 32) ne02
// ne03 nwg (ne20 + 2) bytes; then kernel_flash_attn_ext_vec_reduce
// (FC_FLASH_ATTN_EXT_VEC_REDUCE + 0 dv, + 1 nwg; kargs, tmp, dst at 0..2)
// on nrows = ne1 ne2 ne3 threadgroups of 32 nwg.
//
// The kargs: scale (over the softcap where there is one), max_bias, m0 =
// 2^(-max_bias / n_head_log2), m1 = 2^(-max_bias / 2 / n_head_log2),
// n_head_log2 = 2^floor(log2(ne02)); dst is [ne20, ne02, ne01, ne03]: ne1
// the heads, ne2 the queries.
void RunAttention(const Attention& a) {
  const bool vec = a.n_q < 20 && a.dk % 32 == 0;
  const bool quantized = a.kv != "f16";
  const bool kv_f16 = quantized && a.n_q >= 32;
  const std::string type = kv_f16 ? "f16" : a.kv;
  const std::string kernel = std::string(vec ? "kernel_flash_attn_ext_vec_"
                                             : "kernel_flash_attn_ext_") +
                             type + "_dk" + std::to_string(a.dk) + "_dv" +
                             std::to_string(a.dv);
  SCOPED_TRACE(kernel + (kv_f16 ? " (from " + a.kv + ")" : "") + ": " +
               std::to_string(a.n_q) + " queries, " + std::to_string(a.n_head) +
               " heads over " + std::to_string(a.n_head_kv) + ", " +
               std::to_string(a.n_kv) + " keys" + (a.mask ? ", mask" : "") +
               (a.sinks ? ", sinks" : "") + (a.max_bias != 0 ? ", ALiBi" : "") +
               (a.softcap != 0 ? ", softcap" : ""));

  // The inputs: q f32 [dk, n_q, n_head] viewed from llama.cpp's [dk,
  // n_head, n_q] (a permuted view); k and v [d, n_kv, n_head_kv] viewed
  // from the cache's [d, n_head_kv, n_kv]; the mask f16 [n_kv, n_q].
  const double scale = 1.0 / std::sqrt(double(a.dk));
  const std::vector<float> q = Random(a.n_q * a.n_head * a.dk, 11);
  const Kv k = RandomKv(a.kv, a.dk, a.n_kv * a.n_head_kv, 12);
  const Kv v = RandomKv(a.kv, a.dv, a.n_kv * a.n_head_kv, 13);
  const std::vector<float> mask = RoundedToHalf(CausalMask(a));
  const std::vector<float> sinks = Random(a.n_head, 14, -1.0f, 3.0f);

  const int64_t ne01 = a.n_q, ne02 = a.n_head, ne03 = 1;
  const uint64_t nb01 = 4 * a.dk * a.n_head, nb02 = 4 * a.dk,
                 nb03 = nb01 * a.n_q;
  const int64_t ne11 = a.n_kv, ne12 = a.n_head_kv, ne13 = 1;
  uint64_t nb10 = k.nb0, nb11 = k.row * a.n_head_kv, nb12 = k.row,
           nb13 = nb11 * a.n_kv;
  uint64_t nb20 = v.nb0, nb21 = v.row * a.n_head_kv, nb22 = v.row,
           nb23 = nb21 * a.n_kv;
  const int64_t ne30 = a.n_kv, ne31 = a.n_q, ne32 = 1, ne33 = 1;
  const uint64_t nb31 = 2 * ne30, nb32 = nb31 * ne31, nb33 = nb32 * ne32;
  const std::vector<uint8_t> q_bytes = Bytes(q);
  const std::vector<uint8_t> mask_bytes = Bytes(ToHalf(mask));
  const std::vector<uint8_t> sink_bytes = Bytes(sinks);
  const std::vector<uint8_t> no_mask_bytes = q_bytes;  // src0 stands in

  // _use_kv_f16: K and V dequantized to contiguous half.
  std::vector<uint8_t> k_attn = k.bytes, v_attn = v.bytes;
  if (kv_f16) {
    KernelHarness h = GgmlKernel("kernel_flash_attn_ext_kv_" + a.kv + "_f16");
    ASSERT_TRUE(h.status().ok()) << h.status().error().message;
    const uint64_t nth =
        std::min<uint64_t>(h.pipeline().maxTotalThreadsPerThreadgroup(), 256);
    for (const bool is_k : {true, false}) {
      const Kv& src = is_k ? k : v;
      const int64_t d = is_k ? a.dk : a.dv;
      GgmlKargsFlashAttnExtKvF16 args{};
      args.ne0 = static_cast<int32_t>(d);
      args.ne1 = static_cast<int32_t>(a.n_kv);
      args.ne2 = static_cast<int32_t>(a.n_head_kv);
      args.ne3 = 1;
      args.nb0 = is_k ? nb10 : nb20;
      args.nb1 = is_k ? nb11 : nb21;
      args.nb2 = is_k ? nb12 : nb22;
      args.nb3 = is_k ? nb13 : nb23;
      args.nblocks = static_cast<int32_t>(d / 32 * a.n_kv * a.n_head_kv);
      h.SetBytes(0, args);
      h.SetBuffer(1, src.bytes);
      // _kv_f16_k_size: pad(2 ne10 ne11 ne12 ne13, 16), V's likewise.
      h.SetBuffer(
          2, std::vector<uint8_t>(Pad(2 * d * a.n_kv * a.n_head_kv, 16), 0xff));
      ASSERT_TRUE(RunAndRead(h, {(args.nblocks + nth - 1) / nth, 1, 1},
                             {nth, 1, 1}, 2, is_k ? k_attn : v_attn));
    }
    nb10 = 2, nb11 = 2 * a.dk, nb12 = nb11 * a.n_kv, nb13 = nb12 * a.n_head_kv;
    nb20 = 2, nb21 = 2 * a.dv, nb22 = nb21 * a.n_kv, nb23 = nb22 * a.n_head_kv;
  }

  const int64_t ncpsg = vec ? kVecNcpsg : kNcpsg;
  const bool has_kvpad = ne11 % ncpsg != 0;
  const bool has_bias = a.max_bias != 0, has_scap = a.softcap != 0;
  const std::vector<uint8_t>& mask_or_src0 =
      a.mask ? mask_bytes : no_mask_bytes;

  // _extra_pad, and the pad kernel where the KV length needs it.
  std::vector<uint8_t> pad(kNcpsg * (nb11 * ne12 * ne13 + nb21 * ne12 * ne13 +
                                     (a.mask ? 2 * ne31 * ne32 * ne33 : 0)),
                           0);
  if (has_kvpad) {
    KernelHarness h =
        GgmlKernel("kernel_flash_attn_ext_pad",
                   {{"100", Bool(a.mask)}, {"125", std::to_string(ncpsg)}});
    ASSERT_TRUE(h.status().ok()) << h.status().error().message;
    const GgmlKargsFlashAttnExtPad args = {static_cast<int32_t>(ne11),
                                           static_cast<int32_t>(ne12),
                                           static_cast<int32_t>(ne13),
                                           nb11,
                                           nb12,
                                           nb13,
                                           nb21,
                                           nb22,
                                           nb23,
                                           static_cast<int32_t>(ne31),
                                           static_cast<int32_t>(ne32),
                                           static_cast<int32_t>(ne33),
                                           nb31,
                                           nb32,
                                           nb33};
    h.SetBytes(0, args);
    h.SetBuffer(1, k_attn);
    h.SetBuffer(2, v_attn);
    h.SetBuffer(3, mask_or_src0);
    h.SetBuffer(4, pad);
    ASSERT_TRUE(RunAndRead(h,
                           {static_cast<uint64_t>(ncpsg),
                            static_cast<uint64_t>(std::max(ne12, ne32)),
                            static_cast<uint64_t>(std::max(ne13, ne33))},
                           {32, 1, 1}, 4, pad));
  }

  // The kargs of either attention kernel.
  const HostAlibi alibi = HostAlibiArgs(ne02, a.max_bias);
  GgmlKargsFlashAttnExt args{};
  args.ne01 = static_cast<int32_t>(ne01);
  args.ne02 = static_cast<int32_t>(ne02);
  args.ne03 = static_cast<int32_t>(ne03);
  args.nb01 = nb01;
  args.nb02 = nb02;
  args.nb03 = nb03;
  args.ne11 = static_cast<int32_t>(ne11);
  args.ne_12_2 = static_cast<int32_t>(ne12);
  args.ne_12_3 = static_cast<int32_t>(ne13);
  args.ns10 = static_cast<int32_t>(nb11 / nb10);
  args.nb11 = nb11;
  args.nb12 = nb12;
  args.nb13 = nb13;
  args.ns20 = static_cast<int32_t>(nb21 / nb20);
  args.nb21 = nb21;
  args.nb22 = nb22;
  args.nb23 = nb23;
  args.ne31 = static_cast<int32_t>(ne31);
  args.ne32 = static_cast<int32_t>(ne32);
  args.ne33 = static_cast<int32_t>(ne33);
  args.nb31 = nb31;
  args.nb32 = nb32;
  args.nb33 = nb33;
  args.ne1 = static_cast<int32_t>(ne02);
  args.ne2 = static_cast<int32_t>(ne01);
  args.ne3 = static_cast<int32_t>(ne03);
  args.scale = static_cast<float>(has_scap ? scale / a.softcap : scale);
  args.max_bias = a.max_bias;
  args.m0 = alibi.m0;
  args.m1 = alibi.m1;
  args.n_head_log2 = alibi.n_head_log2;
  args.logit_softcap = a.softcap;

  const auto bind_inputs = [&](KernelHarness& h) {
    h.SetBytes(0, args);
    h.SetBuffer(1, q_bytes);
    h.SetBuffer(2, k_attn);
    h.SetBuffer(3, v_attn);
    if (a.mask) {
      h.SetBuffer(4, mask_bytes);
    } else {
      h.SetSameBuffer(4, 1);
    }
    if (a.sinks) {
      h.SetBuffer(5, sink_bytes);
    } else {
      h.SetSameBuffer(5, 1);
    }
    h.SetBuffer(6, pad);
  };
  const std::vector<uint8_t> dst_init(4 * a.dv * ne02 * ne01 * ne03, 0xff);
  std::vector<uint8_t> dst;

  if (!vec) {
    // _extra_blk (nothing without a mask: the host then binds the next
    // area, which the kernel does not read), and the blk pre-pass.
    const int64_t nblk1 = (ne01 + kNqptg - 1) / kNqptg;
    const int64_t nblk0 = (ne30 + kNcpsg - 1) / kNcpsg;
    std::vector<uint8_t> blk(a.mask ? Pad(nblk0 * nblk1 * ne32 * ne33, 32) : 32,
                             0xff);
    if (a.mask) {
      KernelHarness h = GgmlKernel(
          "kernel_flash_attn_ext_blk",
          {{"224", std::to_string(kNqptg)}, {"225", std::to_string(kNcpsg)}});
      ASSERT_TRUE(h.status().ok()) << h.status().error().message;
      const GgmlKargsFlashAttnExtBlk blk_args = {static_cast<int32_t>(ne01),
                                                 static_cast<int32_t>(ne30),
                                                 static_cast<int32_t>(ne31),
                                                 static_cast<int32_t>(ne32),
                                                 static_cast<int32_t>(ne33),
                                                 nb31,
                                                 nb32,
                                                 nb33};
      h.SetBytes(0, blk_args);
      h.SetBuffer(1, mask_bytes);
      h.SetBuffer(2, blk);
      ASSERT_TRUE(RunAndRead(
          h,
          {static_cast<uint64_t>(nblk0), static_cast<uint64_t>(nblk1),
           static_cast<uint64_t>(ne32 * ne33)},
          {32, 1, 1}, 2, blk));
    }
    const int64_t nsg = a.dk >= 512 ? 8 : 4;
    const int64_t is_q = !kv_f16 && quantized ? 1 : 0;
    KernelHarness h =
        GgmlKernel(kernel, {{"300", Bool(a.mask)},
                            {"301", Bool(a.sinks)},
                            {"302", Bool(has_bias)},
                            {"303", Bool(has_scap)},
                            {"304", Bool(has_kvpad)},
                            {"310", Bool(a.mask && ne31 % 8 != 0)},
                            {"320", std::to_string(args.ns10)},
                            {"321", std::to_string(args.ns20)},
                            {"322", std::to_string(nsg)}});
    ASSERT_TRUE(h.status().ok()) << h.status().error().message;
    bind_inputs(h);
    h.SetBuffer(7, blk);
    h.SetBuffer(8, dst_init);
    const uint64_t smem =
        Pad((kNqptg * (a.dk + 2 * Pad(a.dv, 64) + 2 * (2 * kNcpsg)) +
             is_q * (16 * 32 * nsg)) *
                2,
            16);
    ASSERT_TRUE(h.SetThreadgroupMemoryLength(smem, 0).ok());
    ASSERT_TRUE(
        RunAndRead(h,
                   {static_cast<uint64_t>(nblk1), static_cast<uint64_t>(ne02),
                    static_cast<uint64_t>(ne03)},
                   {32, static_cast<uint64_t>(nsg), 1}, 8, dst));
  } else {
    constexpr int64_t nwg = 32;
    int64_t nsg = 1;
    while (2 * nwg * nsg * kVecNcpsg < ne11 && nsg < 4) nsg *= 2;
    KernelHarness h = GgmlKernel(kernel, {{"400", Bool(a.mask)},
                                          {"401", Bool(a.sinks)},
                                          {"402", Bool(has_bias)},
                                          {"403", Bool(has_scap)},
                                          {"404", Bool(has_kvpad)},
                                          {"420", std::to_string(args.ns10)},
                                          {"421", std::to_string(args.ns20)},
                                          {"422", std::to_string(nsg)},
                                          {"423", std::to_string(nwg)}});
    ASSERT_TRUE(h.status().ok()) << h.status().error().message;
    bind_inputs(h);
    h.SetBuffer(7, std::vector<uint8_t>(4 * std::min<int64_t>(ne01, 32) * ne02 *
                                            ne03 * nwg * (a.dv + 2),
                                        0xff));
    const uint64_t smem = Pad(
        (Pad(a.dk, 128) + 4 * kVecNcpsg + 2 * Pad(a.dv, 128)) * nsg * 2, 16);
    ASSERT_TRUE(h.SetThreadgroupMemoryLength(smem, 0).ok());
    std::vector<uint8_t> tmp;
    ASSERT_TRUE(
        RunAndRead(h,
                   {static_cast<uint64_t>(ne01), static_cast<uint64_t>(ne02),
                    static_cast<uint64_t>(ne03 * nwg)},
                   {32, static_cast<uint64_t>(nsg), 1}, 7, tmp));
    KernelHarness r = GgmlKernel(
        "kernel_flash_attn_ext_vec_reduce",
        {{"500", std::to_string(a.dv)}, {"501", std::to_string(nwg)}});
    ASSERT_TRUE(r.status().ok()) << r.status().error().message;
    const GgmlKargsFlashAttnExtVecReduce reduce_args = {
        static_cast<int32_t>(ne02 * ne01 * ne03)};
    r.SetBytes(0, reduce_args);
    r.SetBuffer(1, tmp);
    r.SetBuffer(2, dst_init);
    ASSERT_TRUE(RunAndRead(r, {static_cast<uint64_t>(reduce_args.nrows), 1, 1},
                           {static_cast<uint64_t>(32 * nwg), 1, 1}, 2, dst));
  }

  std::vector<float> got(dst.size() / 4);
  std::memcpy(got.data(), dst.data(), dst.size());
  const std::vector<double> want =
      AttentionReference(a, scale, q, k.values, v.values, mask, sinks);
  // The kernels hold Q (and a dequantized K/V) in half, so each logit is
  // off by up to about 2^-11 of the terms of its dot product, a few 1e-4
  // here, which moves an output, a convex mix of V's rows, by that times
  // the spread of V (|V| <= 2); the rest (exp, the online softmax's
  // rescaling, the sums of P V) is in float. 2e-3 of V's size is an order
  // of magnitude above that and far below what a wrong key, head or
  // softmax would give (a sizeable fraction of |V|).
  double vmax = 0;
  for (const float x : v.values) vmax = std::max<double>(vmax, std::fabs(x));
  EXPECT_TRUE(Near(got, want, 2e-3, 2e-3 * vmax));
}

// The prompt kernel, head size 64: 4 batches of 8 queries, 4 heads over 2
// KV heads, 256 keys in 4 chunks, a sliding window of 128 so the mask's
// blocks are of each kind (all -inf: skipped; mixed; all zero).
TEST(GgmlMetal, FlashAttentionPromptHead64WithMaskAndGqa) {
  REQUIRE_GGML();
  Attention a;
  a.n_head_kv = 2;
  a.window = 128;
  RunAttention(a);
}

// Head size 128 with ALiBi over 6 heads (past the 4 of the power of two,
// the slopes of the second sequence) of 3 KV heads.
TEST(GgmlMetal, FlashAttentionPromptHead128WithAlibi) {
  REQUIRE_GGML();
  Attention a;
  a.dk = a.dv = 128;
  a.n_q = 24;
  a.n_head = 6;
  a.n_head_kv = 3;
  a.n_kv = 128;
  a.max_bias = 8.0f;
  RunAttention(a);
}

// Head size 128, one KV head for 4 (multi-query), soft-capped logits,
// attention sinks, and 200 keys: the last chunk of 8 comes from the pad
// kernel's copy.
TEST(GgmlMetal, FlashAttentionPromptWithSoftcapSinksAndPaddedKv) {
  REQUIRE_GGML();
  Attention a;
  a.dk = a.dv = 128;
  a.n_q = 24;
  a.n_head_kv = 1;
  a.n_kv = 200;
  a.softcap = 2.5f;
  a.sinks = true;
  RunAttention(a);
}

// A q8_0 KV cache in a prompt of 32 queries: dequantized to half first.
TEST(GgmlMetal, FlashAttentionPromptQ80KvDequantizedToF16) {
  REQUIRE_GGML();
  Attention a;
  a.kv = "q8_0";
  a.n_head_kv = 2;
  a.n_kv = 128;
  RunAttention(a);
}

// The decode step: one query, head size 128, 8 heads over 2 KV heads, 256
// keys split over 32 workgroups (8 of 32 chunks; the first 3 masked out by
// a window of 160, the other 24 workgroups with nothing) and reduced.
TEST(GgmlMetal, FlashAttentionDecodeHead128AcrossWorkgroups) {
  REQUIRE_GGML();
  Attention a;
  a.dk = a.dv = 128;
  a.n_q = 1;
  a.n_head = 8;
  a.n_head_kv = 2;
  a.window = 160;
  RunAttention(a);
}

// A few queries (draft tokens) of head size 64 without a mask, with sinks
// and a softcap, over 200 keys (the decode kernel's pad, chunks of 32).
TEST(GgmlMetal, FlashAttentionDecodeHead64NoMaskWithSinksSoftcapAndPadding) {
  REQUIRE_GGML();
  Attention a;
  a.n_q = 3;
  a.n_head = 2;
  a.n_head_kv = 1;
  a.n_kv = 200;
  a.mask = false;
  a.sinks = true;
  a.softcap = 2.5f;
  RunAttention(a);
}

// A decode step over 2112 keys: 2 simdgroups a workgroup, reduced within
// the threadgroup first.
TEST(GgmlMetal, FlashAttentionDecodeLongKvTwoSimdgroups) {
  REQUIRE_GGML();
  Attention a;
  a.n_q = 1;
  a.n_head = 1;
  a.n_head_kv = 1;
  a.n_kv = 2112;
  RunAttention(a);
}

// A decode step reading a q8_0 KV cache as it is.
TEST(GgmlMetal, FlashAttentionDecodeQ80Kv) {
  REQUIRE_GGML();
  Attention a;
  a.kv = "q8_0";
  a.dk = a.dv = 128;
  a.n_q = 1;
  a.n_head = 4;
  a.n_head_kv = 2;
  a.max_bias = 4.0f;
  RunAttention(a);
}

}  // namespace
}  // namespace mtlemu::ggml
