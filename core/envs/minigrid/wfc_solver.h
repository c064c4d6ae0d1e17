// minigrid 3.2.0's wave function collapse (minigrid/envs/wfc/wfclogic, after ikarth's wfc_2019f), reproduced so
// that the same numpy generator gives the same layout:
//  * the model (tiles.py, patterns.py, adjacency.py): the image's pixels hashed to tile codes, every
//    pattern_width x pattern_width patch (wrapping around the image's edges) of the image and of its 7 other
//    reflections/rotations hashed to pattern codes, patterns numbered in the order of their signed 64-bit codes
//    (np.unique), weighted by how many of the 8 images hold them; two patterns may sit side by side where they
//    overlap equally. The codes are hash_downto's: inner products with RandomState(0).randint(1 - 2**63, 2**63)
//    (legacy MT19937), with int64 wrap-around. The order matters: it is the order the weighted draws see.
//  * the solver (solver.py, control.py): the location preferences random((rows, cols)) * 0.1; then per attempt a
//    full wave, propagated to its fixpoint (the largest arc-consistent wave, which any propagation order reaches;
//    here a worklist of bitsets instead of numpy's whole-wave passes), then repeatedly: the unresolved cell with
//    the least preference + pattern count (first in row-major order on ties), a pattern drawn as
//    Generator.choice(n, p=weights * wave / sum) draws it (cumsum, divided by its last value, searchsorted right
//    of one random()), propagation. A contradiction starts the next attempt (no backtracking).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/envs/common/numpy_random.h"
#include "core/envs/minigrid/wfc_png.h"

namespace pp::minigrid::wfc {

// control.py's direction_offsets, in its order: (dx, dy) with dx along the wave's rows, dy along its columns.
inline constexpr int kDx[4] = {0, 1, 0, -1};
inline constexpr int kDy[4] = {-1, 0, 1, 0};

// The patterns of one image and pattern width, and which may be neighbours.
struct Model {
  int n = 0;                   // number of patterns
  int words = 0;               // 64-bit words of a set of patterns
  std::vector<double> weight;  // per pattern
  std::vector<uint8_t> wall;   // per pattern: its top-left pixel (the one the output keeps) has red 0, a wall
  // support[d][p * words ..]: the patterns q for which p may sit at offset d from q (adj[d][q, p]).
  std::array<std::vector<uint64_t>, 4> support;
  // has_any[d]: the patterns with any neighbour at offset d (what a border cell keeps when the output does not
  // wrap: numpy pads the wave with True there).
  std::array<std::vector<uint64_t>, 4> has_any;
};

// utilities.hash_downto's vector: RandomState(0).randint(1 - 2**63, 2**63, n, dtype=int64). Legacy randint draws
// 64-bit values from MT19937 (high word first) masked to 64 bits and redrawn while above the range 2**64 - 2.
inline std::vector<uint64_t> HashVector(int n) {
  std::mt19937 mt(0);  // std::mt19937's integer seeding is init_genrand, as RandomState(0)'s
  const uint64_t range = ~uint64_t{0} - 1;
  const uint64_t offset = uint64_t{1} - (uint64_t{1} << 63);
  std::vector<uint64_t> v(static_cast<size_t>(n));
  for (uint64_t& x : v) {
    uint64_t draw;
    do {
      const uint64_t hi = static_cast<uint32_t>(mt());
      const uint64_t lo = static_cast<uint32_t>(mt());
      draw = (hi << 32) | lo;
    } while (draw > range);
    x = offset + draw;
  }
  return v;
}

namespace detail {

struct TileGrid {
  int h = 0, w = 0;
  std::vector<uint64_t> code;  // row-major
  uint64_t At(int r, int c) const { return code[static_cast<size_t>(r) * w + c]; }
};

// patterns.py's grid_ops: np.fliplr and np.rot90(axes=(1, 0)) (a clockwise quarter turn).
inline TileGrid FlipLr(const TileGrid& g) {
  TileGrid o{g.h, g.w, std::vector<uint64_t>(g.code.size())};
  for (int r = 0; r < g.h; ++r) {
    for (int c = 0; c < g.w; ++c) o.code[static_cast<size_t>(r) * o.w + c] = g.At(r, g.w - 1 - c);
  }
  return o;
}
inline TileGrid RotateClockwise(const TileGrid& g) {
  TileGrid o{g.w, g.h, std::vector<uint64_t>(g.code.size())};
  for (int r = 0; r < o.h; ++r) {
    for (int c = 0; c < o.w; ++c) o.code[static_cast<size_t>(r) * o.w + c] = g.At(g.h - 1 - c, r);
  }
  return o;
}

}  // namespace detail

inline Model BuildModel(const RgbImage& img, int k) {
  const std::vector<uint64_t> v = HashVector(std::max(3, k * k));
  // tiles.py with tile_size 1: a tile is a pixel, its code r * v0 + g * v1 + b * v2 (uint8 x int64, wrapping).
  detail::TileGrid g{img.height, img.width, std::vector<uint64_t>(static_cast<size_t>(img.height) * img.width)};
  std::map<uint64_t, bool> tile_is_wall;
  for (int r = 0; r < img.height; ++r) {
    for (int c = 0; c < img.width; ++c) {
      const uint8_t* px = img.At(r, c);
      const uint64_t code = px[0] * v[0] + px[1] * v[1] + px[2] * v[2];
      g.code[static_cast<size_t>(r) * g.w + c] = code;
      tile_is_wall[code] = px[0] == 0;  // wfcenv's layout: a wall where the pixel's red is 0
    }
  }
  // patterns.py: the identity, then fliplr, rot90, fliplr, ... applied in turn (8 images); each image's distinct
  // patches add 1 to their pattern's weight.
  struct Pattern {
    std::vector<uint64_t> tiles;  // k x k, row-major
    int weight = 0;
  };
  std::map<int64_t, Pattern> patterns;  // ordered by the signed code, as np.unique orders them
  std::vector<uint64_t> patch(static_cast<size_t>(k) * k);
  for (int t = 0; t < 8; ++t) {
    if (t > 0) g = (t % 2 == 1) ? detail::FlipLr(g) : detail::RotateClockwise(g);
    std::set<int64_t> seen;
    for (int i = 0; i < g.h; ++i) {
      for (int j = 0; j < g.w; ++j) {
        uint64_t code = 0;
        for (int a = 0; a < k; ++a) {
          for (int b = 0; b < k; ++b) {
            const uint64_t tile = g.At((i + a) % g.h, (j + b) % g.w);
            patch[static_cast<size_t>(a) * k + b] = tile;
            code += tile * v[static_cast<size_t>(a) * k + b];
          }
        }
        const auto signed_code = static_cast<int64_t>(code);
        if (!seen.insert(signed_code).second) continue;
        Pattern& p = patterns[signed_code];
        p.tiles = patch;
        ++p.weight;
      }
    }
  }
  Model m;
  m.n = static_cast<int>(patterns.size());
  m.words = (m.n + 63) / 64;
  std::vector<const std::vector<uint64_t>*> tiles;
  for (const auto& [code, p] : patterns) {
    m.weight.push_back(static_cast<double>(p.weight));
    m.wall.push_back(tile_is_wall.at(p.tiles[0]) ? 1 : 0);
    tiles.push_back(&p.tiles);
  }
  // adjacency.py: p2 may sit at offset (dx, dy) (dx along the pattern's columns, dy along its rows) from p1 where
  // the overlap agrees: p1[r][c] == p2[r - dy][c - dx] for every overlapping cell.
  const size_t W = static_cast<size_t>(m.words);
  for (int d = 0; d < 4; ++d) {
    const int dx = kDx[d], dy = kDy[d];
    m.support[d].assign(static_cast<size_t>(m.n) * W, 0);
    m.has_any[d].assign(W, 0);
    for (int q = 0; q < m.n; ++q) {
      for (int p = 0; p < m.n; ++p) {
        bool ok = true;
        for (int r = std::max(0, dy); ok && r < std::min(k, k + dy); ++r) {
          for (int c = std::max(0, dx); ok && c < std::min(k, k + dx); ++c) {
            ok = (*tiles[q])[static_cast<size_t>(r) * k + c] == (*tiles[p])[static_cast<size_t>(r - dy) * k + c - dx];
          }
        }
        if (!ok) continue;
        m.support[d][static_cast<size_t>(p) * W + q / 64] |= uint64_t{1} << (q % 64);
        m.has_any[d][q / 64] |= uint64_t{1} << (q % 64);
      }
    }
  }
  return m;
}

// The model of an image file and pattern width, built once per process and shared by every env (read-only).
inline std::shared_ptr<const Model> LoadModel(const std::string& path, int pattern_width) {
  static std::mutex mu;
  static std::map<std::pair<std::string, int>, std::shared_ptr<const Model>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[{path, pattern_width}];
  if (!slot) slot = std::make_shared<const Model>(BuildModel(ReadPngRgb(path), pattern_width));
  return slot;
}

// execute_wfc for one output size: Run gives each cell's pattern (row-major) or false after attempt_limit
// contradictions, drawing from `rng` exactly what minigrid draws from np_random.
class Solver {
 public:
  Solver(std::shared_ptr<const Model> model, int rows, int cols, bool periodic)
      : m_(std::move(model)), rows_(rows), cols_(cols), periodic_(periodic) {
    const size_t cells = static_cast<size_t>(rows) * cols;
    wave_.resize(cells * m_->words);
    count_.resize(cells);
    prefs_.resize(cells);
    queued_.resize(cells);
    stack_.reserve(cells);
    support_.resize(m_->words);
    cdf_.resize(m_->n);
  }

  bool Run(NumpyGenerator& rng, int attempt_limit, std::vector<int>& solution) {
    for (double& p : prefs_) p = rng.Random() * 0.1;
    for (int attempt = 0; attempt < attempt_limit; ++attempt) {
      if (Attempt(rng)) {
        solution.resize(count_.size());
        for (size_t cell = 0; cell < count_.size(); ++cell) solution[cell] = FirstPattern(cell);
        return true;
      }
    }
    return false;
  }

 private:
  uint64_t* Domain(size_t cell) { return &wave_[cell * m_->words]; }

  int FirstPattern(size_t cell) {
    const uint64_t* d = Domain(cell);
    for (int w = 0; w < m_->words; ++w) {
      if (d[w]) return w * 64 + __builtin_ctzll(d[w]);
    }
    return 0;
  }

  // One attempt of run(): false on a contradiction.
  bool Attempt(NumpyGenerator& rng) {
    const int W = m_->words, n = m_->n;
    const size_t cells = count_.size();
    for (size_t cell = 0; cell < cells; ++cell) {
      uint64_t* d = Domain(cell);
      for (int w = 0; w < W; ++w) d[w] = ~uint64_t{0};
      if (n % 64) d[W - 1] = (uint64_t{1} << (n % 64)) - 1;
      count_[cell] = n;
    }
    if (n == 1) return true;  // solve_next: already solved, nothing propagated or drawn
    stack_.clear();
    std::fill(queued_.begin(), queued_.end(), uint8_t{0});
    // numpy pads a non-wrapping wave with True: a border cell keeps the patterns with any neighbour outside it.
    for (size_t cell = 0; cell < cells; ++cell) {
      const int a = static_cast<int>(cell) / cols_, b = static_cast<int>(cell) % cols_;
      if (!periodic_) {
        for (int d = 0; d < 4; ++d) {
          const int na = a + kDx[d], nb = b + kDy[d];
          if (na >= 0 && na < rows_ && nb >= 0 && nb < cols_) continue;
          if (!Restrict(cell, m_->has_any[d].data())) return false;
        }
      }
      Push(cell);
    }
    if (!Propagate()) return false;
    while (true) {
      // makeEntropyLocationHeuristic: argmin over unresolved cells of preference + count.
      size_t best = cells;
      double best_weight = std::numeric_limits<double>::infinity();
      for (size_t cell = 0; cell < cells; ++cell) {
        if (count_[cell] <= 1) continue;
        const double weight = prefs_[cell] + static_cast<double>(count_[cell]);
        if (weight < best_weight) {
          best_weight = weight;
          best = cell;
        }
      }
      if (best == cells) return true;  // every cell resolved
      const int pattern = Choose(rng, best);
      uint64_t* d = Domain(best);
      for (int w = 0; w < W; ++w) d[w] = 0;
      d[pattern / 64] = uint64_t{1} << (pattern % 64);
      count_[best] = 1;
      Push(best);
      if (!Propagate()) return false;
    }
  }

  // makeWeightedPatternHeuristic: Generator.choice(n, p=p) with p = weights * wave[:, cell] / its sum. The weights
  // are small integers, so the sum is exact in any order; the cumulative sum is sequential as numpy's.
  int Choose(NumpyGenerator& rng, size_t cell) {
    const uint64_t* d = Domain(cell);
    const int n = m_->n;
    double sum = 0.0;
    for (int q = 0; q < n; ++q) {
      if ((d[q / 64] >> (q % 64)) & 1) sum += m_->weight[q];
    }
    double acc = 0.0;
    for (int q = 0; q < n; ++q) {
      const double p = ((d[q / 64] >> (q % 64)) & 1) ? m_->weight[q] : 0.0;
      acc += p / sum;
      cdf_[q] = acc;
    }
    const double last = cdf_[n - 1];
    for (double& c : cdf_) c /= last;
    const double u = rng.Random();
    return static_cast<int>(std::upper_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin());
  }

  void Push(size_t cell) {
    if (queued_[cell]) return;
    queued_[cell] = 1;
    stack_.push_back(static_cast<int>(cell));
  }

  // wave[:, cell] &= allowed; false when nothing is left.
  bool Restrict(size_t cell, const uint64_t* allowed) {
    uint64_t* d = Domain(cell);
    bool changed = false;
    int count = 0;
    for (int w = 0; w < m_->words; ++w) {
      const uint64_t nw = d[w] & allowed[w];
      changed |= nw != d[w];
      d[w] = nw;
      count += __builtin_popcountll(nw);
    }
    if (!changed) return true;
    count_[cell] = count;
    if (count == 0) return false;
    Push(cell);
    return true;
  }

  // propagate(): a pattern q stays at a cell while, in each direction d, the cell at offset d holds a pattern p
  // with adj[d][q, p]. A cell whose set shrank re-checks the cells that look at it.
  bool Propagate() {
    const int W = m_->words;
    while (!stack_.empty()) {
      const size_t cell = static_cast<size_t>(stack_.back());
      stack_.pop_back();
      queued_[cell] = 0;
      const int a = static_cast<int>(cell) / cols_, b = static_cast<int>(cell) % cols_;
      for (int d = 0; d < 4; ++d) {
        int na = a - kDx[d], nb = b - kDy[d];  // the cell whose offset-d neighbour is `cell`
        if (periodic_) {
          na = (na + rows_) % rows_;
          nb = (nb + cols_) % cols_;
        } else if (na < 0 || na >= rows_ || nb < 0 || nb >= cols_) {
          continue;
        }
        std::fill(support_.begin(), support_.end(), uint64_t{0});
        const uint64_t* dom = Domain(cell);
        for (int w = 0; w < W; ++w) {
          for (uint64_t bits = dom[w]; bits; bits &= bits - 1) {
            const size_t p = static_cast<size_t>(w) * 64 + __builtin_ctzll(bits);
            const uint64_t* s = &m_->support[d][p * W];
            for (int x = 0; x < W; ++x) support_[x] |= s[x];
          }
        }
        if (!Restrict(static_cast<size_t>(na) * cols_ + nb, support_.data())) return false;
      }
    }
    return true;
  }

  std::shared_ptr<const Model> m_;
  int rows_, cols_;
  bool periodic_;
  std::vector<uint64_t> wave_;  // cells x words
  std::vector<int> count_;      // patterns left per cell
  std::vector<double> prefs_;
  std::vector<uint8_t> queued_;
  std::vector<int> stack_;
  std::vector<uint64_t> support_;
  std::vector<double> cdf_;
};

}  // namespace pp::minigrid::wfc
