// The resize of a frame to the observation size, shared by the Atari and ViZDoom families (core/envs/common/:
// code several families use; not a family itself).
//
// Area resize: OpenCV's INTER_AREA for a shrink by non-integer factors, reproduced operation by operation (the
// same tables computed in double, the same float multiply/add order, round-half-even), so frames are bit-identical
// to cv2.resize(..., interpolation=cv2.INTER_AREA) as used by EnvPool and gymnasium's AtariPreprocessing. This
// needs no fused multiply-add contraction: every env source compiles with -ffp-contract=off.
// Linear resize: OpenCV's INTER_LINEAR fixed-point scheme (11-bit coefficients, and the rounding of its vectorized
// vertical pass, which cv2 uses for all but a few trailing pixels of a row: those may differ by 1 in principle;
// none did in the tests). Enlarging with area interpolation is OpenCV's INTER_AREA-enlarge linear variant.
//
// No allocation after construction. All buffers are owned by the FrameResizer.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace pp {

using v4f = float __attribute__((vector_size(16)));

// One output element's contribution from one input element: out[di] += in[si] * alpha.
struct AreaTap {
  int di, si;
  float alpha;
};

// OpenCV's computeResizeAreaTab (imgproc/resize.cpp), for one axis: ssize -> dsize with scale = ssize / dsize.
inline std::vector<AreaTap> AreaTaps(int ssize, int dsize, double scale) {
  std::vector<AreaTap> tab;
  for (int dx = 0; dx < dsize; ++dx) {
    double fsx1 = dx * scale;
    double fsx2 = fsx1 + scale;
    double cell = std::min(scale, ssize - fsx1);
    int sx1 = static_cast<int>(std::ceil(fsx1)), sx2 = static_cast<int>(std::floor(fsx2));
    sx2 = std::min(sx2, ssize - 1);
    sx1 = std::min(sx1, sx2);
    if (sx1 - fsx1 > 1e-3) tab.push_back({dx, sx1 - 1, static_cast<float>((sx1 - fsx1) / cell)});
    for (int sx = sx1; sx < sx2; ++sx) tab.push_back({dx, sx, static_cast<float>(1.0 / cell)});
    if (fsx2 - sx2 > 1e-3) {
      tab.push_back({dx, sx2, static_cast<float>(std::min(std::min(fsx2 - sx2, 1.0), cell) / cell)});
    }
  }
  return tab;
}

// Max-pools two frames of palette indices through a palette table (one channel) and resizes the result, writing
// uint8 with a pixel stride (1 for gray, 3 for one channel of interleaved RGB). Buffers are allocated once.
class FrameResizer {
 public:
  FrameResizer(int src_h, int src_w, int dst_h, int dst_w, bool area)
      : sh_(src_h), sw_(src_w), dh_(dst_h), dw_(dst_w), area_(area) {
    if (dst_h < 1 || dst_w < 1) throw std::invalid_argument("image size must be positive");
    pooled_.assign(static_cast<size_t>(sw_) + 32, 0);
    if (area_ && (dst_h > src_h || dst_w > src_w)) {  // cv2: INTER_AREA enlarging is a linear variant
      area_ = false;
      linear_area_mode_ = true;
    }
    if (area_) {
      InitArea();
    } else {
      InitLinear();
    }
  }

  // dst[y * row_stride + x * px_stride] = resize(max(lut[a], lut[b]))[y][x]. `a` may be null (no pooling).
  // a, b: src_h * src_w palette indices (row-major).
  void Run(const uint8_t* a, const uint8_t* b, const uint8_t* lut, uint8_t* dst, int px_stride) {
    if (area_) {
      RunArea(a, b, lut, dst, px_stride);
    } else {
      RunLinear(a, b, lut, dst, px_stride);
    }
  }

 private:
  // Max-pool one row through the palette: pooled_[x] = max(lut[a[x]], lut[b[x]]).
  void PoolRow(const uint8_t* a, const uint8_t* b, const uint8_t* lut) {
    uint8_t* out = pooled_.data();
    if (a == nullptr) {
      for (int x = 0; x < sw_; ++x) out[x] = lut[b[x]];
      return;
    }
    int x = 0;
    // Consecutive frames mostly agree: where 16 indices match, one lookup per pixel is enough.
    for (; x + 16 <= sw_; x += 16) {
      uint64_t a0, a1, b0, b1;
      std::memcpy(&a0, a + x, 8);
      std::memcpy(&a1, a + x + 8, 8);
      std::memcpy(&b0, b + x, 8);
      std::memcpy(&b1, b + x + 8, 8);
      if (a0 == b0 && a1 == b1) {
        for (int i = 0; i < 16; ++i) out[x + i] = lut[b[x + i]];
      } else {
        for (int i = 0; i < 16; ++i) out[x + i] = std::max(lut[a[x + i]], lut[b[x + i]]);
      }
    }
    for (; x < sw_; ++x) out[x] = std::max(lut[a[x]], lut[b[x]]);
  }

  // ---- area ----
  // taps per output the vectorized pass handles: a shrink by s needs at most ceil(s) + 1 (Atari's < 2: 3;
  // ViZDoom's 320 -> 84: 5)
  static constexpr size_t kMaxTaps = 16;

  // out[p] = {g[p], g[p+Q], g[p+2Q], g[p+3Q]} as floats, for p in [0, Q). Reads up to g[3Q + 15].
  struct LaneTap {
    v4f alpha;  // the tap's weight, broadcast
    int si;     // input position within a lane block
  };

  void InitArea() {
    // cv2: inv_scale = (double)dsize / ssize; scale = 1. / inv_scale
    double scale_x = 1.0 / (static_cast<double>(dw_) / sw_);
    double scale_y = 1.0 / (static_cast<double>(dh_) / sh_);
    xtab_ = AreaTaps(sw_, dw_, scale_x);
    ytab_ = AreaTaps(sh_, dh_, scale_y);
    hrow_.assign(sh_, nullptr);
    canon_.assign(sh_, 0);
    sum_.assign(static_cast<size_t>(dw_) + 4, 0.f);
    rowf_.assign(static_cast<size_t>(sw_) + 4, 0.f);
    out8_.assign(static_cast<size_t>(dw_) + 16, 0);
    // Vertical taps grouped per output row; ref_dy_[dy]: an earlier output row with bit-identical weights
    // (-1: none). When that row read the same (de-duplicated) source rows, its output is copied.
    ystart_.assign(dh_ + 1, 0);
    for (size_t t = 0, dy = 0; dy < static_cast<size_t>(dh_); ++dy) {
      ystart_[dy] = static_cast<int>(t);
      while (t < ytab_.size() && ytab_[t].di == static_cast<int>(dy)) ++t;
      ystart_[dy + 1] = static_cast<int>(t);
    }
    // the ring holds more distinct rows than one output row reads (its taps span consecutive source rows)
    int most = 1;
    for (int dy = 0; dy < dh_; ++dy) most = std::max(most, ystart_[dy + 1] - ystart_[dy]);
    ring_ = most + 2;
    hbuf_.assign(static_cast<size_t>(ring_) * dw_ + 4, 0.f);
    ref_dy_.assign(dh_, -1);
    for (int dy = 0; dy < dh_; ++dy) {
      for (int r = dy - 1; r >= std::max(0, dy - 8) && ref_dy_[dy] < 0; --r) {
        int n = ystart_[dy + 1] - ystart_[dy];
        if (ystart_[r + 1] - ystart_[r] != n) continue;
        bool same = true;
        for (int t = 0; t < n && same; ++t) same = ytab_[ystart_[r] + t].alpha == ytab_[ystart_[dy] + t].alpha;
        if (same) ref_dy_[dy] = r;
      }
    }
    // Vectorized horizontal pass: when the width is a multiple of 4 and the tap table repeats with period
    // (dw/4 outputs, sw/4 inputs) with bit-identical weights, lane k of a 4-float vector handles output
    // block k (outputs [k*P, (k+1)*P)), reading input block k. The float operations per output are exactly
    // those of the scalar table, so the result is unchanged.
    lanes_ = false;
    if (dw_ % 4 == 0 && sw_ % 4 == 0) {
      int P = dw_ / 4, Q = sw_ / 4;
      std::vector<std::vector<AreaTap>> per(dw_);
      for (const auto& t : xtab_) per[t.di].push_back(t);
      bool ok = true;
      for (int j = 0; j < P && ok; ++j) {
        for (int k = 0; k < 4 && ok; ++k) {
          const auto& base = per[j];
          const auto& other = per[j + k * P];
          if (other.size() != base.size()) ok = false;
          for (size_t t = 0; ok && t < base.size(); ++t) {
            if (other[t].si != base[t].si + k * Q || other[t].alpha != base[t].alpha) ok = false;
            if (base[t].si < 0 || base[t].si >= Q) ok = false;
          }
        }
      }
      if (ok) {
        lanes_ = true;
        P_ = P;
        Q_ = Q;
        // Every output gets the same number of taps (taps_): missing taps are padded with weight 0 at the end,
        // which adds +0.0 to a non-negative sum and changes nothing.
        size_t most = 1;
        for (int j = 0; j < P; ++j) most = std::max(most, per[j].size());
        if (most > kMaxTaps) {
          lanes_ = false;
        } else {
          taps_ = static_cast<int>(most);
          ltab_.clear();
          for (int j = 0; j < P; ++j) {
            for (size_t t = 0; t < most; ++t) {
              if (t < per[j].size()) {
                float al = per[j][t].alpha;
                ltab_.push_back({v4f{al, al, al, al}, per[j][t].si});
              } else {
                ltab_.push_back({v4f{0, 0, 0, 0}, per[j].empty() ? 0 : per[j].back().si});
              }
            }
          }
        }
        rowv_.assign(static_cast<size_t>(Q), v4f{0, 0, 0, 0});
      }
    }
  }

  // One source row through the palette (max-pooled), then the horizontal pass into `out` (dw floats; in the
  // lane layout out[j*4 + k] is output j + k*P).
  void HorizontalRow(const uint8_t* a, const uint8_t* b, float* out) {
    if (lanes_) {
      // interleave through the float palette: rowv_[p][k] = max(L[a[p + k*Q]], L[b[p + k*Q]])
      const float* L = lutf_;
      const int Q = Q_;
      if (a == nullptr) {
        for (int p = 0; p < Q; ++p) rowv_[p] = v4f{L[b[p]], L[b[p + Q]], L[b[p + 2 * Q]], L[b[p + 3 * Q]]};
      } else {
        for (int p = 0; p < Q; ++p) {
          v4f va = {L[a[p]], L[a[p + Q]], L[a[p + 2 * Q]], L[a[p + 3 * Q]]};
          v4f vb = {L[b[p]], L[b[p + Q]], L[b[p + 2 * Q]], L[b[p + 3 * Q]]};
          rowv_[p] = va > vb ? va : vb;
        }
      }
      switch (taps_) {  // the common tap counts unrolled
        case 2: LaneTaps<2>(out); break;
        case 3: LaneTaps<3>(out); break;
        case 4: LaneTaps<4>(out); break;
        case 5: LaneTaps<5>(out); break;
        default: LaneTaps<0>(out); break;
      }
    } else {
      const float* L = lutf_;
      float* f = rowf_.data();
      if (a == nullptr) {
        for (int x = 0; x < sw_; ++x) f[x] = L[b[x]];
      } else {
        for (int x = 0; x < sw_; ++x) f[x] = std::max(L[a[x]], L[b[x]]);
      }
      std::fill(out, out + dw_, 0.f);
      for (const auto& t : xtab_) out[t.di] = out[t.di] + f[t.si] * t.alpha;
    }
  }

  // The lane layout's horizontal pass: per output, acc = 0 + row[si0] * a0 + row[si1] * a1 + ..., the scalar
  // table's operations in its order. kT: the tap count, 0 for taps_ at run time.
  template <int kT>
  void LaneTaps(float* out) const {
    const int taps = kT > 0 ? kT : taps_;
    const v4f* row = rowv_.data();
    const LaneTap* tab = ltab_.data();
    for (int j = 0; j < P_; ++j, tab += taps) {
      v4f acc = {0, 0, 0, 0};
      for (int t = 0; t < taps; ++t) acc = acc + row[tab[t].si] * tab[t].alpha;
      std::memcpy(out + 4 * j, &acc, sizeof(acc));
    }
  }

  void RunArea(const uint8_t* a, const uint8_t* b, const uint8_t* lut, uint8_t* dst, int px_stride) {
    for (int i = 0; i < 256; ++i) lutf_[i] = static_cast<float>(lut[i]);
    // Source rows are processed lazily, in order, as output rows need them; their horizontal results live in a
    // small ring (only the last few distinct rows are ever needed), so the working set stays in L1.
    // Atari frames repeat rows a lot (backgrounds, sprites several lines tall): a row whose palette indices
    // equal the previous row's is not computed again; canon_[y] names the first row of its run of equal rows.
    const size_t w = static_cast<size_t>(sw_);
    int next_y = 0, distinct = 0;
    auto process_until = [&](int last) {
      for (; next_y <= last; ++next_y) {
        const int y = next_y;
        const uint8_t* by = b + y * w;
        const uint8_t* ay = a == nullptr ? nullptr : a + y * w;
        if (y > 0 && std::memcmp(by, by - w, w) == 0 && (ay == nullptr || std::memcmp(ay, ay - w, w) == 0)) {
          canon_[y] = canon_[y - 1];
          hrow_[y] = hrow_[y - 1];
          continue;
        }
        float* out = hbuf_.data() + static_cast<size_t>(distinct++ % ring_) * dw_;
        // where the two frames agree on the whole row, max-pooling is the identity: one lookup per pixel
        HorizontalRow(ay != nullptr && std::memcmp(ay, by, w) == 0 ? nullptr : ay, by, out);
        canon_[y] = y;
        hrow_[y] = out;
      }
    };
    // Vertical pass, in cv2's order: per output row, sum = b0*row0; sum += b1*row1; ...
    float* sum = sum_.data();
    const size_t row_stride = static_cast<size_t>(dw_) * px_stride;
    for (int dy = 0; dy < dh_; ++dy) {
      const int t0 = ystart_[dy], t1 = ystart_[dy + 1];
      process_until(ytab_[t1 - 1].si);
      uint8_t* d = dst + dy * row_stride;
      const int r = ref_dy_[dy];
      if (r >= 0) {
        bool same = true;
        for (int t = 0; t < t1 - t0 && same; ++t) same = canon_[ytab_[t0 + t].si] == canon_[ytab_[ystart_[r] + t].si];
        if (same) {
          const uint8_t* src = dst + r * row_stride;
          if (px_stride == 1) {
            std::memcpy(d, src, dw_);
          } else {
            for (int x = 0; x < dw_; ++x) d[x * px_stride] = src[x * px_stride];
          }
          continue;
        }
      }
      const int n = dw_;
      {
        const float* row = hrow_[ytab_[t0].si];
        const float beta = ytab_[t0].alpha;
        for (int x = 0; x < n; ++x) sum[x] = beta * row[x];
      }
      for (int t = t0 + 1; t < t1; ++t) {
        const float* row = hrow_[ytab_[t].si];
        const float beta = ytab_[t].alpha;
        for (int x = 0; x < n; ++x) sum[x] = sum[x] + beta * row[x];
      }
      uint8_t* o8 = out8_.data();
      for (int x = 0; x < n; ++x) o8[x] = Round(sum[x]);
      if (lanes_) {
        for (int k = 0; k < 4; ++k) {
          uint8_t* dk = d + static_cast<size_t>(k) * P_ * px_stride;
          for (int j = 0; j < P_; ++j) dk[j * px_stride] = o8[j * 4 + k];
        }
      } else if (px_stride == 1) {
        std::memcpy(d, o8, n);
      } else {
        for (int x = 0; x < n; ++x) d[x * px_stride] = o8[x];
      }
    }
  }

  // cv2's saturate_cast<uchar>(float): round half to even, then clamp.
  static uint8_t Round(float v) {
    float r = (v + 12582912.0f) - 12582912.0f;  // exact round-half-even for |v| < 2^22
    r = r < 0.f ? 0.f : (r > 255.f ? 255.f : r);
    return static_cast<uint8_t>(static_cast<int>(r));
  }

  // ---- linear (cv2 INTER_LINEAR, 8-bit fixed point) ----
  void InitLinear() {
    constexpr int kScale = 1 << 11;
    double scale_x = 1.0 / (static_cast<double>(dw_) / sw_);
    double scale_y = 1.0 / (static_cast<double>(dh_) / sh_);
    xofs_.resize(dw_);
    xalpha_.resize(2 * static_cast<size_t>(dw_));
    for (int dx = 0; dx < dw_; ++dx) {
      float fx;
      int sx;
      LinearCoord(dx, scale_x, &sx, &fx);
      if (sx < 0) fx = 0, sx = 0;
      if (sx >= sw_ - 1) fx = 0, sx = sw_ - 1;
      xofs_[dx] = sx;
      xalpha_[2 * dx] = SatShort((1.f - fx) * kScale);
      xalpha_[2 * dx + 1] = SatShort(fx * kScale);
    }
    yofs_.resize(dh_);
    ybeta_.resize(2 * static_cast<size_t>(dh_));
    for (int dy = 0; dy < dh_; ++dy) {
      float fy;
      int sy;
      LinearCoord(dy, scale_y, &sy, &fy);
      yofs_[dy] = sy;
      ybeta_[2 * dy] = SatShort((1.f - fy) * kScale);
      ybeta_[2 * dy + 1] = SatShort(fy * kScale);
    }
    lrows_.assign(static_cast<size_t>(sh_) * dw_, 0);
  }
  // cv2's source coordinate of output d: pixel centres for INTER_LINEAR; INTER_AREA when enlarging uses cell
  // edges instead.
  void LinearCoord(int d, double scale, int* s, float* f) const {
    if (!linear_area_mode_) {
      float fv = static_cast<float>((d + 0.5) * scale - 0.5);
      *s = static_cast<int>(std::floor(fv));
      *f = fv - *s;
    } else {
      const double inv = 1.0 / scale;
      *s = static_cast<int>(std::floor(d * scale));
      float fv = static_cast<float>((d + 1) - (*s + 1) * inv);
      *f = fv <= 0 ? 0.f : fv - std::floor(fv);
    }
  }
  static int16_t SatShort(float v) {
    long r = std::lrint(v);
    return static_cast<int16_t>(std::clamp<long>(r, -32768, 32767));
  }

  void RunLinear(const uint8_t* a, const uint8_t* b, const uint8_t* lut, uint8_t* dst, int px_stride) {
    // horizontal: every source row (rows are cheap; simpler than tracking which rows are used)
    for (int y = 0; y < sh_; ++y) {
      PoolRow(a == nullptr ? nullptr : a + static_cast<size_t>(y) * sw_, b + static_cast<size_t>(y) * sw_, lut);
      int32_t* o = lrows_.data() + static_cast<size_t>(y) * dw_;
      const uint8_t* g = pooled_.data();
      for (int dx = 0; dx < dw_; ++dx) {
        int sx = xofs_[dx];
        int sx1 = std::min(sx + 1, sw_ - 1);
        o[dx] = g[sx] * xalpha_[2 * dx] + g[sx1] * xalpha_[2 * dx + 1];
      }
    }
    const int row_stride = dw_ * px_stride;
    for (int dy = 0; dy < dh_; ++dy) {
      int sy0 = std::clamp(yofs_[dy], 0, sh_ - 1), sy1 = std::clamp(yofs_[dy] + 1, 0, sh_ - 1);
      const int32_t* r0 = lrows_.data() + static_cast<size_t>(sy0) * dw_;
      const int32_t* r1 = lrows_.data() + static_cast<size_t>(sy1) * dw_;
      int b0 = ybeta_[2 * dy], b1 = ybeta_[2 * dy + 1];
      uint8_t* d = dst + static_cast<size_t>(dy) * row_stride;
      for (int x = 0; x < dw_; ++x) {
        // cv2's vectorized VResizeLinear for 8-bit: ((r0>>4)*b0 >> 16) + ((r1>>4)*b1 >> 16), then (+2) >> 2
        int v = ((((r0[x] >> 4) * b0) >> 16) + (((r1[x] >> 4) * b1) >> 16) + 2) >> 2;
        d[x * px_stride] = static_cast<uint8_t>(std::clamp(v, 0, 255));
      }
    }
  }

  int sh_, sw_, dh_, dw_;
  bool area_;
  bool linear_area_mode_ = false;
  std::vector<uint8_t> pooled_;
  // area
  std::vector<AreaTap> xtab_, ytab_;
  std::vector<LaneTap> ltab_;
  std::vector<int> ystart_, ref_dy_;
  bool lanes_ = false;
  int P_ = 0, Q_ = 0, taps_ = 0;
  std::vector<v4f> rowv_;
  std::vector<float> hbuf_, sum_, rowf_;
  std::vector<const float*> hrow_;
  std::vector<int> canon_;
  int ring_ = 0;
  std::vector<uint8_t> out8_;
  float lutf_[256];
  // linear
  std::vector<int> xofs_, yofs_;
  std::vector<int16_t> xalpha_, ybeta_;
  std::vector<int32_t> lrows_;
};

}  // namespace pp
