// numpy's default random Generator, bit for bit: SeedSequence -> PCG64 (XSL-RR 128/64) -> the draws the Python
// reference envs make (Generator.integers for int64, shuffle, random, uniform). gymnasium seeds an env's np_random
// with np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed))); an env that draws from NumpyGenerator
// seeded with the same value, in the same order, generates exactly what the Python env generates. Its state can be
// read and set as numpy's bit_generator.state holds it (StateWords), so an env can also start from the state of a
// given Python env's np_random (the Box2D family's alignment tests, its snapshots).
// Checked against numpy for many seeds, ranges and states by tests/envs/test_numpy_random.py.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/engine/env.h"

namespace pp {

class NumpyGenerator {
 public:
  NumpyGenerator() { Seed(0); }
  explicit NumpyGenerator(uint64_t seed) { Seed(seed); }

  // np.random.PCG64(np.random.SeedSequence(seed)).
  void Seed(uint64_t seed) {
    // SeedSequence's entropy: the int as little-endian 32-bit words (0 is one word).
    std::vector<uint32_t> entropy{static_cast<uint32_t>(seed)};
    if (seed >> 32) entropy.push_back(static_cast<uint32_t>(seed >> 32));
    uint32_t pool[kPoolSize];
    MixEntropy(entropy, pool);
    // generate_state(4, uint64): 8 words cycled from the pool, paired little-endian into 4 uint64.
    uint32_t words[8];
    uint32_t hash_const = kInitB;
    for (int i = 0; i < 8; ++i) {
      uint32_t v = pool[i % kPoolSize];
      v ^= hash_const;
      hash_const *= kMultB;
      v *= hash_const;
      v ^= v >> kXShift;
      words[i] = v;
    }
    uint64_t val[4];
    for (int i = 0; i < 4; ++i) val[i] = uint64_t{words[2 * i]} | (uint64_t{words[2 * i + 1]} << 32);
    // pcg64_set_seed: state = val[0]:val[1], increment from val[2]:val[3] (high:low).
    const u128 initstate = (u128{val[0]} << 64) | val[1];
    const u128 initseq = (u128{val[2]} << 64) | val[3];
    state_ = 0;
    inc_ = (initseq << 1) | 1;
    Step();
    state_ += initstate;
    Step();
    has_uint32_ = false;
    uinteger_ = 0;
  }

  uint64_t NextUint64() {
    Step();
    const uint64_t x = static_cast<uint64_t>(state_ >> 64) ^ static_cast<uint64_t>(state_);
    const unsigned rot = static_cast<unsigned>(state_ >> 122);
    return (x >> rot) | (x << ((64 - rot) & 63));
  }

  // PCG64 hands out the two halves of one 64-bit draw: low first, the high half kept for the next call.
  uint32_t NextUint32() {
    if (has_uint32_) {
      has_uint32_ = false;
      return uinteger_;
    }
    const uint64_t next = NextUint64();
    has_uint32_ = true;
    uinteger_ = static_cast<uint32_t>(next >> 32);
    return static_cast<uint32_t>(next & 0xffffffffu);
  }

  // Generator.integers(low, high) with the default int64 dtype: a value in [low, high). Lemire's bounded draw on
  // 32 bits when the range fits, as numpy's random_bounded_uint64_fill does.
  int64_t Integers(int64_t low, int64_t high) {
    if (high <= low) throw std::invalid_argument("NumpyGenerator::Integers: high <= low");
    const uint64_t rng = static_cast<uint64_t>(high) - static_cast<uint64_t>(low) - 1;
    if (rng == 0) return low;
    uint64_t r;
    if (rng <= 0xffffffffULL) {
      r = rng == 0xffffffffULL ? NextUint32() : BoundedLemire32(static_cast<uint32_t>(rng));
    } else if (rng == ~uint64_t{0}) {
      r = NextUint64();
    } else {
      r = BoundedLemire64(rng);
    }
    return static_cast<int64_t>(static_cast<uint64_t>(low) + r);
  }

  // Generator.random() / uniform(low, high).
  double Random() { return static_cast<double>(NextUint64() >> 11) * (1.0 / 9007199254740992.0); }
  double Uniform(double low, double high) { return low + (high - low) * Random(); }

  // Generator.shuffle of a list (and of a 1-d array): Fisher-Yates from the back with random_interval.
  template <typename T>
  void Shuffle(T* data, int64_t n) {
    for (int64_t i = n - 1; i >= 1; --i) {
      const int64_t j = static_cast<int64_t>(Interval(static_cast<uint64_t>(i)));
      std::swap(data[i], data[j]);
    }
  }

  // A stream drawn from the env's own generator, for envs that start each episode from gen_ rather than from a
  // seed (Box2D: varied, reproducible episodes without reseeding): the state and the increment straight from
  // four 64-bit draws, the increment made odd as PCG64 requires.
  void SeedFrom(Generator& gen) {
    uint64_t w[4];
    for (uint64_t& x : w) x = (uint64_t{gen()} << 32) | gen();
    state_ = (u128{w[0]} << 64) | w[1];
    inc_ = (((u128{w[2]} << 64) | w[3]) << 1) | 1;
    has_uint32_ = false;
    uinteger_ = 0;
  }

  // The state as numpy's bit_generator.state dict holds it, in values a double holds exactly (so it fits an env's
  // state vector): state and inc as four 32-bit words each, most significant first, then has_uint32 and uinteger.
  static constexpr size_t kStateWords = 10;
  std::vector<double> StateWords() const {
    std::vector<double> out;
    out.reserve(kStateWords);
    for (u128 v : {state_, inc_}) {
      for (int shift = 96; shift >= 0; shift -= 32)
        out.push_back(static_cast<double>(static_cast<uint32_t>(v >> shift)));
    }
    out.push_back(has_uint32_ ? 1.0 : 0.0);
    out.push_back(static_cast<double>(uinteger_));
    return out;
  }
  // Reads StateWords' layout from s[at, at + kStateWords). Anything numpy would not hold (a value that is not a
  // 32-bit unsigned integer, has_uint32 not 0 or 1, an even inc) throws std::invalid_argument before anything changes.
  void SetStateWords(const std::vector<double>& s, size_t at = 0) {
    if (s.size() < at + kStateWords) throw std::invalid_argument("a numpy PCG64 state is 10 values");
    uint32_t w[kStateWords];
    for (size_t i = 0; i < kStateWords; ++i) {
      const double v = s[at + i];
      if (!(v >= 0 && v <= 4294967295.0) || v != static_cast<double>(static_cast<uint32_t>(v))) {
        throw std::invalid_argument("a numpy PCG64 state holds 32-bit unsigned integers");
      }
      w[i] = static_cast<uint32_t>(v);
    }
    if (w[8] > 1) throw std::invalid_argument("has_uint32 of a numpy PCG64 state is 0 or 1");
    if ((w[7] & 1u) == 0) throw std::invalid_argument("the inc of a numpy PCG64 state is odd");
    u128 st = 0, inc = 0;
    for (int i = 0; i < 4; ++i) st = (st << 32) | w[i];
    for (int i = 4; i < 8; ++i) inc = (inc << 32) | w[i];
    state_ = st;
    inc_ = inc;
    has_uint32_ = w[8] == 1;
    uinteger_ = w[9];
  }

 private:
  using u128 = unsigned __int128;
  static constexpr int kPoolSize = 4;
  static constexpr uint32_t kInitA = 0x43b0d7e5, kMultA = 0x931e8875, kInitB = 0x8b51f9dd, kMultB = 0x58f38ded;
  static constexpr uint32_t kMixMultL = 0xca01f9dd, kMixMultR = 0x4973f715;
  static constexpr int kXShift = 16;

  static uint32_t HashMix(uint32_t value, uint32_t& hash_const) {
    value ^= hash_const;
    hash_const *= kMultA;
    value *= hash_const;
    value ^= value >> kXShift;
    return value;
  }
  static uint32_t Mix(uint32_t x, uint32_t y) {
    uint32_t r = kMixMultL * x - kMixMultR * y;
    r ^= r >> kXShift;
    return r;
  }
  static void MixEntropy(const std::vector<uint32_t>& entropy, uint32_t* mixer) {
    uint32_t hash_const = kInitA;
    for (int i = 0; i < kPoolSize; ++i) {
      mixer[i] = HashMix(i < static_cast<int>(entropy.size()) ? entropy[i] : 0, hash_const);
    }
    for (int src = 0; src < kPoolSize; ++src) {
      for (int dst = 0; dst < kPoolSize; ++dst) {
        if (src != dst) mixer[dst] = Mix(mixer[dst], HashMix(mixer[src], hash_const));
      }
    }
    for (size_t src = kPoolSize; src < entropy.size(); ++src) {
      for (int dst = 0; dst < kPoolSize; ++dst) mixer[dst] = Mix(mixer[dst], HashMix(entropy[src], hash_const));
    }
  }

  void Step() {
    static const u128 kMult = (u128{2549297995355413924ULL} << 64) | 4865540595714422341ULL;
    state_ = state_ * kMult + inc_;
  }

  uint32_t BoundedLemire32(uint32_t rng) {
    const uint32_t rng_excl = rng + 1;
    uint64_t m = uint64_t{NextUint32()} * rng_excl;
    uint32_t leftover = static_cast<uint32_t>(m);
    if (leftover < rng_excl) {
      const uint32_t threshold = (UINT32_MAX - rng) % rng_excl;
      while (leftover < threshold) {
        m = uint64_t{NextUint32()} * rng_excl;
        leftover = static_cast<uint32_t>(m);
      }
    }
    return static_cast<uint32_t>(m >> 32);
  }
  uint64_t BoundedLemire64(uint64_t rng) {
    const uint64_t rng_excl = rng + 1;
    u128 m = u128{NextUint64()} * rng_excl;
    uint64_t leftover = static_cast<uint64_t>(m);
    if (leftover < rng_excl) {
      const uint64_t threshold = (UINT64_MAX - rng) % rng_excl;
      while (leftover < threshold) {
        m = u128{NextUint64()} * rng_excl;
        leftover = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }
  // random_interval: the smallest all-ones mask >= max, redrawn until the masked value is <= max.
  uint64_t Interval(uint64_t max) {
    if (max == 0) return 0;
    uint64_t mask = max;
    for (int s = 1; s <= 32; s <<= 1) mask |= mask >> s;
    uint64_t value;
    if (max <= 0xffffffffULL) {
      while ((value = (NextUint32() & mask)) > max) {
      }
    } else {
      while ((value = (NextUint64() & mask)) > max) {
      }
    }
    return value;
  }

  u128 state_ = 0, inc_ = 0;
  bool has_uint32_ = false;
  uint32_t uinteger_ = 0;
};

}  // namespace pp
