// A canvas of palette indices (one byte per pixel) with an even-odd polygon fill and an exact area-average shrink
// to an RGB frame, for CarRacing's frames (car_racing.h).
//
// CarRacing draws a dozen colours onto gymnasium's 1000x800 surface and shrinks it to 96x96. One byte per pixel
// makes a span fill a memset and the canvas 800 KB instead of 2.4 MB, and a canvas row is a few runs of one
// colour, so the shrink adds each run's coverage of an output column (its length) times its colour, analytically,
// instead of weighting every pixel. The weights are integers: a canvas pixel is OutW/gcd(W, OutW) units wide and an
// output column W/gcd units (12 and 125 for 1000 -> 96), likewise for rows (3 and 25 for 800 -> 96), so an output
// pixel is the exact area mean of the pixels it covers, rounded to the nearest level.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

namespace pp::box2d {

template <int W, int H, int OutW, int OutH>
class PaletteCanvas {
 public:
  using Rgb = std::array<int, 3>;

  PaletteCanvas() : pixels_(static_cast<size_t>(W) * H, 0) {}

  void SetInk(uint8_t ink, const Rgb& rgb) { palette_[ink] = rgb; }

  // Fills the polygon (canvas coordinates, y down) with `ink`: the pixels whose centre is inside (even-odd rule,
  // scanlines through pixel centres). With `outside` >= 0 every other pixel of the canvas becomes `outside`, so a
  // first polygon that covers most of the canvas also clears it, in one pass.
  void Fill(const double (*p)[2], int n, uint8_t ink, int outside = -1) {
    Edge edges[kMaxVertices];
    int m = 0;
    double ymin = 1e300, ymax = -1e300;
    for (int k = 0; k < n; ++k) {
      const double* a = p[k];
      const double* b = p[(k + 1) % n];
      ymin = std::min(ymin, a[1]), ymax = std::max(ymax, a[1]);
      if (a[1] == b[1]) continue;  // a horizontal edge crosses no scanline
      const double* lo = a[1] < b[1] ? a : b;
      const double* hi = a[1] < b[1] ? b : a;
      edges[m++] = {lo[1], hi[1], lo[0], (hi[0] - lo[0]) / (hi[1] - lo[1])};
    }
    const int y0 = std::max(0, static_cast<int>(std::ceil(ymin - 0.5)));
    const int y1 = std::min(H - 1, static_cast<int>(std::floor(ymax - 0.5)));
    if (outside >= 0) {
      std::memset(pixels_.data(), outside, static_cast<size_t>(std::clamp(y0, 0, H)) * W);
      if (y1 + 1 < H) std::memset(Row(std::max(y1 + 1, 0)), outside, static_cast<size_t>(H - std::max(y1 + 1, 0)) * W);
    }
    double xs[kMaxVertices];
    for (int y = y0; y <= y1; ++y) {
      const double yc = y + 0.5;
      int c = 0;
      for (int k = 0; k < m; ++k) {  // half-open [lo, hi): a vertex on the scanline counts once
        if (edges[k].ylo <= yc && yc < edges[k].yhi) xs[c++] = edges[k].x + (yc - edges[k].ylo) * edges[k].slope;
      }
      if (c == 2) {
        if (xs[1] < xs[0]) std::swap(xs[0], xs[1]);
      } else {
        std::sort(xs, xs + c);
      }
      uint8_t* row = Row(y);
      int done = 0;  // with `outside`: the row is written up to here
      for (int k = 0; k + 1 < c; k += 2) {
        const int xa = std::max(0, static_cast<int>(std::ceil(xs[k] - 0.5)));
        const int xb = std::min(W - 1, static_cast<int>(std::floor(xs[k + 1] - 0.5)));
        if (xb < xa) continue;
        if (outside >= 0) std::memset(row + done, outside, static_cast<size_t>(std::max(0, xa - done)));
        std::memset(row + xa, ink, static_cast<size_t>(xb - xa + 1));
        done = xb + 1;
      }
      if (outside >= 0 && done < W) std::memset(row + done, outside, static_cast<size_t>(W - done));
    }
  }

  // The area mean of the canvas, OutH x OutW x 3 uint8 (row-major, RGB).
  void Shrink(uint8_t* out) {
    std::fill(acc_.begin(), acc_.end(), 0);
    Run runs[W];
    for (int y = 0; y < H; ++y) {
      const int n = Runs(Row(y), runs);
      // the row covers [y * kRowUnit, (y + 1) * kRowUnit) of the output rows' units, in one or two output rows
      const int u0 = y * kRowUnit, u1 = u0 + kRowUnit, r0 = u0 / kOutRowUnits, r1 = (u1 - 1) / kOutRowUnits;
      if (r0 == r1) {
        AddRow(runs, n, kRowUnit, &acc_[static_cast<size_t>(r0) * OutW * 3]);
      } else {
        AddRow(runs, n, r1 * kOutRowUnits - u0, &acc_[static_cast<size_t>(r0) * OutW * 3]);
        AddRow(runs, n, u1 - r1 * kOutRowUnits, &acc_[static_cast<size_t>(r1) * OutW * 3]);
      }
    }
    constexpr int32_t kTotal = kOutColUnits * kOutRowUnits;  // the weight of a whole output pixel
    for (size_t i = 0; i < acc_.size(); ++i) out[i] = static_cast<uint8_t>((acc_[i] + kTotal / 2) / kTotal);
  }

 private:
  static constexpr int kMaxVertices = 16;
  static constexpr int kColUnit = OutW / std::gcd(W, OutW), kOutColUnits = W / std::gcd(W, OutW);
  static constexpr int kRowUnit = OutH / std::gcd(H, OutH), kOutRowUnits = H / std::gcd(H, OutH);
  static_assert(OutW <= W && OutH <= H, "a shrink");
  static_assert(int64_t{255} * kOutColUnits * kOutRowUnits < (int64_t{1} << 31), "int32 sums");

  struct Edge {
    double ylo, yhi, x, slope;  // x at ylo, dx/dy
  };
  struct Run {
    int begin, end;
    uint8_t ink;
  };

  uint8_t* Row(int y) { return &pixels_[static_cast<size_t>(y) * W]; }

  // Splits a row into runs of one ink, comparing 8 pixels at a time.
  static int Runs(const uint8_t* row, Run* runs) {
    int n = 0, x = 0;
    while (x < W) {
      const uint8_t ink = row[x];
      const uint64_t splat = 0x0101010101010101ull * ink;
      int e = x + 1;
      for (; e + 8 <= W; e += 8) {
        uint64_t word;
        std::memcpy(&word, row + e, 8);
        if (word != splat) {
          // the first differing byte: the lowest in memory, the lowest-order on a little-endian machine
          e += (std::endian::native == std::endian::little ? std::countr_zero(word ^ splat)
                                                           : std::countl_zero(word ^ splat)) /
               8;
          break;
        }
      }
      while (e < W && row[e] == ink) ++e;
      runs[n++] = {x, e, ink};
      x = e;
    }
    return n;
  }

  // Adds runs (one canvas row, weighted `wy` row units) to one output row's sums: each run covers
  // [begin * kColUnit, end * kColUnit) of the output columns' units.
  void AddRow(const Run* runs, int n, int wy, int32_t* acc) const {
    for (int i = 0; i < n; ++i) {
      const Rgb& c = palette_[runs[i].ink];
      const int a = runs[i].begin * kColUnit, b = runs[i].end * kColUnit;
      const int c0 = a / kOutColUnits, c1 = (b - 1) / kOutColUnits;
      const auto add = [&](int col, int units) {
        int32_t* o = acc + col * 3;
        const int w = units * wy;
        o[0] += w * c[0], o[1] += w * c[1], o[2] += w * c[2];
      };
      if (c0 == c1) {
        add(c0, b - a);
        continue;
      }
      add(c0, (c0 + 1) * kOutColUnits - a);
      const int32_t full[3] = {kOutColUnits * wy * c[0], kOutColUnits * wy * c[1], kOutColUnits * wy * c[2]};
      for (int col = c0 + 1; col < c1; ++col) {
        int32_t* o = acc + col * 3;
        o[0] += full[0], o[1] += full[1], o[2] += full[2];
      }
      add(c1, b - c1 * kOutColUnits);
    }
  }

  std::vector<uint8_t> pixels_;
  std::array<Rgb, 256> palette_{};  // by ink
  std::array<int32_t, OutW * OutH * 3> acc_{};
};

}  // namespace pp::box2d
