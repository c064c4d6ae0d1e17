// A canvas of palette indices (one byte per pixel) with an even-odd polygon fill, shrunk to an RGB frame exactly as
// pygame's smoothscale does it, for CarRacing's frames (car_racing.h).
//
// CarRacing draws a dozen colours onto gymnasium's 1000x800 surface and shrinks it to 96x96. One byte per pixel
// makes a span fill a memset and the canvas 800 KB instead of 2.4 MB (3 bytes per pixel).
//
// The shrink is pygame-ce's smoothscale with its SSE2 filters (the backend gymnasium's frames come from on x86-64;
// `pygame.transform.get_smoothscale_backend()`), reproduced bit for bit: first along x, then along y, each output
// value is (the pixels it fully covers + 14-bit fractions of the two pixels it shares with its neighbours) times a
// reciprocal, all in truncating 16-bit fixed point. Its truncations darken a flat 102 to 100, which an exact area
// mean would not, so copying them keeps our frames closest to gymnasium's. Most output pixels of the x pass see one
// colour only (a canvas row is a few long runs), so those are a table lookup per colour; only pixels on a colour
// edge add up their source pixels.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace pp::box2d {

template <int W, int H, int OutW, int OutH>
class PaletteCanvas {
 public:
  static constexpr int kInks = 16;  // palette indices 0..15
  using Rgb = std::array<int, 3>;

  PaletteCanvas() : pixels_(static_cast<size_t>(W) * H, 0), xs_(W, OutW), ys_(H, OutH) {
    for (const Tap& t : xs_.taps) {
      if (t.last - t.first + 1 < 8) throw std::logic_error("PaletteCanvas: OneInk needs 8 pixels per column");
    }
    for (int ink = 0; ink < kInks; ++ink) SetInk(static_cast<uint8_t>(ink), {0, 0, 0});
  }

  void SetInk(uint8_t ink, const Rgb& rgb) {
    if (ink >= kInks) throw std::out_of_range("PaletteCanvas: ink " + std::to_string(ink) + " >= 16");
    Lanes v{}, first{}, last{}, flat{};
    for (int c = 0; c < 3; ++c) v[c] = static_cast<uint16_t>(std::clamp(rgb[c], 0, 255));
    palette_[ink] = Pack(v);
    for (int ox = 0; ox < OutW; ++ox) {  // the x pass's terms for this ink, and its value on a stretch of it alone
      const Tap& t = xs_.taps[ox];
      for (int c = 0; c < 3; ++c) {
        first[c] = MulHi(static_cast<uint16_t>(v[c] << 2), t.carry);
        last[c] = MulHi(static_cast<uint16_t>(v[c] << 2), t.count);
        flat[c] = xs_.Final(static_cast<uint16_t>(first[c] + v[c] * (t.last - t.full_begin) + last[c]));
      }
      first_[ox][ink] = Pack(first);
      last_[ox][ink] = Pack(last);
      flat_[ink][ox] = Pack(flat);
    }
  }

  // Fills the polygon (canvas coordinates, y down) with `ink`: the pixels whose centre is inside (even-odd rule,
  // scanlines through pixel centres), in the canvas rows [0, rows) only. With `outside` >= 0 every other pixel of
  // those rows becomes `outside`, so a first polygon that covers most of the canvas also clears it, in one pass.
  void Fill(const double (*p)[2], int n, uint8_t ink, int outside = -1, int rows = H) {
    if (ink >= kInks || outside >= kInks || n > kMaxVertices || rows < 0 || rows > H) {
      throw std::out_of_range("PaletteCanvas::Fill");
    }
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
    const int y0 = static_cast<int>(std::ceil(std::clamp(ymin - 0.5, 0.0, double(rows))));
    const int y1 = static_cast<int>(std::floor(std::clamp(ymax - 0.5, -1.0, double(rows - 1))));
    if (outside >= 0) {  // the rows the polygon misses
      std::memset(pixels_.data(), outside, static_cast<size_t>(y0) * W);
      const int below = std::max(y1 + 1, 0);
      std::memset(pixels_.data() + static_cast<size_t>(below) * W, outside, static_cast<size_t>(rows - below) * W);
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
        const int xa = static_cast<int>(std::ceil(std::clamp(xs[k] - 0.5, 0.0, double(W))));
        const int xb = static_cast<int>(std::floor(std::clamp(xs[k + 1] - 0.5, -1.0, double(W - 1))));
        if (xb < xa) continue;
        if (outside >= 0 && xa > done) std::memset(row + done, outside, static_cast<size_t>(xa - done));
        std::memset(row + xa, ink, static_cast<size_t>(xb - xa + 1));
        done = xb + 1;
      }
      if (outside >= 0 && done < W) std::memset(row + done, outside, static_cast<size_t>(W - done));
    }
  }

  // pygame.transform.smoothscale of the canvas to OutW x OutH, written as OutH x OutW x 3 uint8 (row-major, RGB).
  void Shrink(uint8_t* out) {
    // the y pass, over the x pass of each canvas row, in pygame's order and arithmetic
    std::array<uint64_t, OutW> sums{}, shared{};  // packed lanes per pixel
    std::array<uint16_t, OutW * 4> acc, row, done;
    for (int oy = 0; oy < OutH; ++oy) {
      const Tap& t = ys_.taps[oy];
      for (int y = t.full_begin; y < t.last; ++y) ShrinkRow<true>(y, sums.data());
      ShrinkRow<false>(t.last, shared.data());  // the row this output row shares with the next one
      std::memcpy(acc.data(), sums.data(), sizeof(acc));
      std::memcpy(row.data(), shared.data(), sizeof(row));
      const uint16_t carry = static_cast<uint16_t>(0x4000 - t.count);
      for (int i = 0; i < OutW * 4; ++i) {  // acc holds the shared first row's part and the whole rows
        const uint16_t four = static_cast<uint16_t>(row[i] << 2);
        done[i] = ys_.Final(static_cast<uint16_t>(acc[i] + MulHi(four, t.count)));
        acc[i] = MulHi(four, carry);
      }
      std::memcpy(sums.data(), acc.data(), sizeof(acc));
      uint8_t* o = out + static_cast<size_t>(oy) * OutW * 3;
      for (int px = 0; px < OutW; ++px) {
        for (int c = 0; c < 3; ++c) o[px * 3 + c] = static_cast<uint8_t>(done[px * 4 + c]);
      }
    }
  }

 private:
  static constexpr int kMaxVertices = 16;
  static constexpr int kBlock = 4;  // columns tried as one stretch of one ink
  static_assert(OutW < W && OutH < H, "a shrink on both axes (pygame's other cases differ)");
  static_assert(255 * (W / OutW + 2) < 65536 && 255 * (H / OutH + 2) < 65536, "16-bit lanes (as pygame's)");

  struct Edge {
    double ylo, yhi, x, slope;  // x at ylo, dx/dy
  };

  // One output pixel of one axis: source pixels [first, last], of which `first` (shared with the previous output
  // pixel, none for the first output pixel) counts with the 14-bit weight `carry`, [full_begin, last) whole, and
  // `last` (shared with the next one) with `count`.
  struct Tap {
    int first, full_begin, last;
    uint16_t carry, count;
  };
  static uint16_t MulHi(uint16_t a, uint16_t b) { return static_cast<uint16_t>((uint32_t{a} * b) >> 16); }

  // pygame's filter_shrink_X_SSE2 / filter_shrink_Y_SSE2 counters for one axis, `in` -> `out` pixels.
  struct Axis {
    std::vector<Tap> taps;
    uint16_t recip;

    Axis(int in, int out) {
      const int space = 0x4000 * in / out;
      recip = static_cast<uint16_t>(0x40000000 / space);
      int counter = space, first = 0, full_begin = 0, carry = 0;
      for (int x = 0; x < in && static_cast<int>(taps.size()) < out; ++x) {
        if (counter > 0x4000) {
          counter -= 0x4000;
          continue;
        }
        const int frac = 0x4000 - counter;
        taps.push_back({first, full_begin, x, static_cast<uint16_t>(carry), static_cast<uint16_t>(counter)});
        first = x, full_begin = x + 1, carry = frac;
        counter = space - frac;
      }
      if (static_cast<int>(taps.size()) != out) throw std::logic_error("PaletteCanvas: pygame's counters differ");
    }

    // An output value from the sum of its parts: MulHi(4 * first, carry) + the whole pixels + MulHi(4 * last, count).
    uint16_t Final(uint16_t sum) const { return std::min<uint16_t>(MulHi(sum, recip), 255); }  // packus saturates
  };

  // A pixel's 4 lanes (R, G, B, unused) of 16 bits, packed in one word so that a sum adds all lanes at once (no
  // lane exceeds 16 bits: see the static_assert above). Packed and unpacked by memcpy, so the lanes' order in
  // memory is the same on any byte order.
  using Lanes = std::array<uint16_t, 4>;
  static uint64_t Pack(const Lanes& l) {
    uint64_t p;
    std::memcpy(&p, l.data(), 8);
    return p;
  }

  uint8_t* Row(int y) { return &pixels_[static_cast<size_t>(y) * W]; }

  // The x pass of canvas row y, OutW packed pixels, added to `out` (kAdd) or written there. A block of columns of one
  // ink is copied from flat_; in a block with an edge, a column of one ink as well, and a column with an edge
  // adds up its pixels.
  template <bool kAdd>
  void ShrinkRow(int y, uint64_t* out) {
    const uint8_t* row = Row(y);
    const auto put = [out](int col, uint64_t packed) {
      if constexpr (kAdd) {
        out[col] += packed;
      } else {
        out[col] = packed;
      }
    };
    for (int ox = 0; ox < OutW; ox += kBlock) {
      const int n = std::min(kBlock, OutW - ox);
      const int first = xs_.taps[ox].first, last = xs_.taps[ox + n - 1].last;
      if (OneInk(row + first, last - first + 1, row[first])) {
        for (int col = ox; col < ox + n; ++col) put(col, flat_[row[first]][col]);
        continue;
      }
      for (int col = ox; col < ox + n; ++col) {
        const Tap& t = xs_.taps[col];
        const uint8_t ink = row[t.first];
        if (OneInk(row + t.first, t.last - t.first + 1, ink)) {
          put(col, flat_[ink][col]);
          continue;
        }
        uint64_t sum = first_[col][ink] + last_[col][row[t.last]];
        for (int x = t.full_begin; x < t.last; ++x) sum += palette_[row[x]];
        Lanes l;
        std::memcpy(l.data(), &sum, 8);
        for (int c = 0; c < 4; ++c) l[c] = xs_.Final(l[c]);
        put(col, Pack(l));
      }
    }
  }

  // Whether p[0, n) all equal `ink` (n >= 8), 8 bytes at a time.
  static bool OneInk(const uint8_t* p, int n, uint8_t ink) {
    const uint64_t splat = 0x0101010101010101ull * ink;
    uint64_t diff = 0, word;
    for (int k = 0; k + 8 < n; k += 8) {
      std::memcpy(&word, p + k, 8);
      diff |= word ^ splat;
    }
    std::memcpy(&word, p + n - 8, 8);  // the last 8 (overlapping the loop's last word)
    return (diff | (word ^ splat)) == 0;
  }

  std::vector<uint8_t> pixels_;
  Axis xs_, ys_;
  std::array<uint64_t, kInks> palette_{};                           // packed lanes, by ink
  std::array<std::array<uint64_t, kInks>, OutW> first_{}, last_{};  // by column, ink: the x pass's shared pixels
  std::array<std::array<uint64_t, OutW>, kInks> flat_{};  // by ink, column: the x pass of a stretch of one ink
};

}  // namespace pp::box2d
