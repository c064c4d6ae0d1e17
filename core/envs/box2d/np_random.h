// numpy's default generator (np.random.Generator on PCG64), the draws gymnasium's Box2D envs make: uniform doubles
// and bounded integers. gymnasium draws terrain, initial pushes and engine dispersion from `np_random` while the
// physics runs, so replaying those draws exactly is what lets an env here follow gymnasium's from the same
// generator state (np_random.bit_generator.state, see ToWords/FromWords), step for step.
#pragma once

#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

namespace pp::box2d {

class NpRandom {
 public:
  // numpy's state dict as 10 doubles, each exact: state and inc as four 32-bit words (most significant first),
  // then has_uint32 and uinteger (the half of a 64-bit draw kept for the next 32-bit draw).
  static constexpr int kWords = 10;

  // A fresh stream from the env's own generator (inc odd, as numpy's seeding makes it).
  void Seed(std::mt19937& gen) {
    uint64_t w[4];
    for (uint64_t& x : w) x = (uint64_t{gen()} << 32) | gen();
    state_ = (U128(w[0]) << 64) | w[1];
    inc_ = (((U128(w[2]) << 64) | w[3]) << 1) | 1;
    has_uint32_ = false;
    uinteger_ = 0;
  }

  std::vector<double> ToWords() const {
    std::vector<double> out;
    for (U128 v : {state_, inc_}) {
      for (int shift = 96; shift >= 0; shift -= 32) out.push_back(static_cast<double>(uint32_t(v >> shift)));
    }
    out.push_back(has_uint32_ ? 1.0 : 0.0);
    out.push_back(static_cast<double>(uinteger_));
    return out;
  }

  // Reads ToWords' layout from s[at, at + kWords); throws std::invalid_argument on anything else.
  void FromWords(const std::vector<double>& s, size_t at) {
    if (s.size() < at + kWords) throw std::invalid_argument("a numpy PCG64 state is 10 values");
    uint32_t w[kWords];
    for (int i = 0; i < kWords; ++i) {
      const double v = s[at + i];
      if (!(v >= 0 && v <= 4294967295.0) || v != static_cast<double>(static_cast<uint32_t>(v))) {
        throw std::invalid_argument("a numpy PCG64 state holds 32-bit unsigned integers");
      }
      w[i] = static_cast<uint32_t>(v);
    }
    if (w[8] > 1) throw std::invalid_argument("has_uint32 of a numpy PCG64 state is 0 or 1");
    if ((w[7] & 1u) == 0) throw std::invalid_argument("the inc of a numpy PCG64 state is odd");
    U128 st = 0, inc = 0;
    for (int i = 0; i < 4; ++i) st = (st << 32) | w[i];
    for (int i = 4; i < 8; ++i) inc = (inc << 32) | w[i];
    state_ = st;
    inc_ = inc;
    has_uint32_ = w[8] == 1;
    uinteger_ = w[9];
  }

  // Generator.uniform(low, high): low + (high - low) * random(), random() from the top 53 bits.
  double Uniform(double low, double high) { return low + (high - low) * Random(); }

  // Generator.random(): the top 53 bits of one 64-bit draw.
  double Random() { return NextDouble(); }

  // Generator.integers(low, high) (int64, high exclusive) for ranges below 2**32: Lemire's method on 32-bit draws.
  int64_t Integers(int64_t low, int64_t high) {
    const uint64_t rng = static_cast<uint64_t>(high - low - 1);
    if (rng == 0) return low;
    if (rng >= 0xFFFFFFFFull) throw std::logic_error("NpRandom::Integers: range too large");
    const uint32_t rng_excl = static_cast<uint32_t>(rng) + 1;
    uint64_t m = uint64_t{Next32()} * rng_excl;
    uint32_t leftover = static_cast<uint32_t>(m);
    if (leftover < rng_excl) {
      const uint32_t threshold = (0xFFFFFFFFu - static_cast<uint32_t>(rng)) % rng_excl;
      while (leftover < threshold) {
        m = uint64_t{Next32()} * rng_excl;
        leftover = static_cast<uint32_t>(m);
      }
    }
    return low + static_cast<int64_t>(m >> 32);
  }

 private:
  using U128 = unsigned __int128;

  uint64_t Next64() {  // PCG64 (XSL-RR 128/64): advance, then output
    constexpr U128 kMult = (U128(0x2360ED051FC65DA4ull) << 64) | 0x4385DF649FCCF645ull;
    state_ = state_ * kMult + inc_;
    const uint64_t x = uint64_t(state_ >> 64) ^ uint64_t(state_);
    const unsigned rot = unsigned(state_ >> 122);
    return (x >> rot) | (x << ((64 - rot) & 63));
  }
  uint32_t Next32() {
    if (has_uint32_) {
      has_uint32_ = false;
      return uinteger_;
    }
    const uint64_t next = Next64();
    has_uint32_ = true;
    uinteger_ = static_cast<uint32_t>(next >> 32);
    return static_cast<uint32_t>(next);
  }
  double NextDouble() { return static_cast<double>(Next64() >> 11) * (1.0 / 9007199254740992.0); }

  U128 state_ = 0, inc_ = 1;
  bool has_uint32_ = false;
  uint32_t uinteger_ = 0;
};

}  // namespace pp::box2d
