// Checks a serialized ALE state (ALEState::serialize of cloneState(true), ale-py 0.12.1) before ALE reads it. ALE's
// own reader trusts its input: a length field allocates what it says, an array length writes past the array it fills
// (M6532's RAM), a bank number maps ROM pages past the image (the bank-switching cartridges), a sprite position
// indexes TIA's mask tables, and it reports errors by throwing `const char*` or by returning false half-way (and
// the caller ignores that). So a snapshot's ALE bytes are walked here with ALE's grammar (emucore/*.cxx load(),
// ALEState, Random, the game's RomSettings), next to a state of the same env (`live`: the env's current state, whose
// cartridge, game and layout the snapshot must share), and every value ALE uses as a size, an index or a shift is
// bounded. Anything else throws std::invalid_argument naming the field.
//
// The stream: ints are 4 little-endian bytes, bools the int 0xfab1fab2 or 0xbad1bad2, strings an int length and
// that many bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/engine/env.h"

namespace pp::atari {

class AleStream {
 public:
  AleStream(const std::string& bytes, size_t begin, size_t end, std::string what)
      : s_(bytes), pos_(begin), end_(end), what_(std::move(what)) {}

  size_t pos() const { return pos_; }
  size_t end() const { return end_; }
  // The int at byte p (p + 4 <= end), without reading it.
  uint32_t PeekAt(size_t p) const {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<unsigned char>(s_[p + i])} << (8 * i);
    return v;
  }

  [[noreturn]] void Fail(const std::string& field, const std::string& why) const {
    throw std::invalid_argument(what_ + ": " + field + " " + why);
  }
  int32_t Int(const char* field) {
    if (end_ - pos_ < 4) Fail(field, "is cut off (the state ends early)");
    const uint32_t v = PeekAt(pos_);
    pos_ += 4;
    return static_cast<int32_t>(v);
  }
  int32_t IntIn(const char* field, int64_t lo, int64_t hi) {
    const int32_t v = Int(field);
    if (v < lo || v > hi)
      Fail(field, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + std::to_string(v));
    return v;
  }
  void IntEq(const char* field, int32_t want) {
    const int32_t v = Int(field);
    if (v != want) Fail(field, "must be " + std::to_string(want) + " for this env, got " + std::to_string(v));
  }
  bool Bool(const char* field) {
    const uint32_t v = static_cast<uint32_t>(Int(field));
    if (v != kTrue && v != kFalse) Fail(field, "is not a bool");
    return v == kTrue;
  }
  // A length-prefixed string of at most `most` bytes (a length past the remaining bytes is refused before any
  // allocation).
  std::string String(const char* field, size_t most) {
    const int32_t n = Int(field);
    if (n < 0 || static_cast<size_t>(n) > most || static_cast<size_t>(n) > end_ - pos_) {
      Fail(field, "has a length of " + std::to_string(n) + ", past the " + std::to_string(end_ - pos_) +
                      " bytes left (at most " + std::to_string(most) + ")");
    }
    std::string out = s_.substr(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return out;
  }
  void StringEq(const char* field, const std::string& want) {
    const std::string got = String(field, want.size());
    if (got != want) Fail(field, "must be '" + want + "' for this env, got '" + got + "'");
  }
  void End(const char* field) const {
    if (pos_ != end_) Fail(field, "is followed by " + std::to_string(end_ - pos_) + " unexpected bytes");
  }

  static constexpr uint32_t kTrue = 0xfab1fab2u, kFalse = 0xbad1bad2u;

 private:
  const std::string& s_;
  size_t pos_, end_;
  std::string what_;
};

// std::mt19937's text form (ALE's Random::saveState): 624 words and the position, as decimal numbers separated by
// spaces; checked as the pool's own generator states are.
inline void CheckRandomText(AleStream& in, const char* field) {
  const std::string text = in.String(field, (std::mt19937::state_size + 1) * 11);
  std::vector<uint32_t> words;
  size_t i = 0;
  while (i < text.size()) {
    uint64_t v = 0;
    size_t digits = 0;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9' && digits < 11; ++i, ++digits) {
      v = v * 10 + static_cast<uint64_t>(text[i] - '0');
    }
    if (digits == 0 || v > 0xffffffffULL || (i < text.size() && text[i++] != ' ')) {
      in.Fail(field, "is not a generator state (624 words and a position, in decimal)");
    }
    words.push_back(static_cast<uint32_t>(v));
  }
  try {
    CheckGeneratorWords(words);
  } catch (const std::invalid_argument& e) {
    in.Fail(field, e.what());
  }
}

// The bank-switching schemes of the cartridges the ROMs use (Cartridge::create): their banks, and the RAM and
// register arrays their load() fills (each must have the live state's length).
struct CartLayout {
  int banks;        // 0: no bank number in the state
  int arrays;       // arrays of ints after the bank number (SC: the RAM; E0: the slices; DPC: see below)
  int slice_banks;  // E0: each slice's bank is below this
};
inline const std::map<std::string, CartLayout>& CartLayouts() {
  static const std::map<std::string, CartLayout> layouts = {
      {"Cartridge2K", {0, 0, 0}},   {"Cartridge4K", {0, 0, 0}},   {"CartridgeFE", {0, 0, 0}},
      {"CartridgeF8", {2, 0, 0}},   {"CartridgeF6", {4, 0, 0}},   {"CartridgeF4", {8, 0, 0}},
      {"CartridgeF8SC", {2, 1, 0}}, {"CartridgeF6SC", {4, 1, 0}}, {"CartridgeF4SC", {8, 1, 0}},
      {"CartridgeE0", {0, 1, 8}},   {"CartridgeDPC", {2, 0, 0}},
  };
  return layouts;
}

// An int array: its length as the live state has it (`want`), then its values in [lo, hi].
inline void IntArray(AleStream& in, AleStream& live, const char* field, int64_t lo, int64_t hi) {
  const int32_t n = live.Int(field);
  in.IntEq(field, n);
  for (int32_t i = 0; i < n; ++i) {
    live.Int(field);
    in.IntIn(field, lo, hi);
  }
}

// The cartridge's section: its name (the live cartridge's: a snapshot of another game is refused here or at the
// md5) and its fields.
inline void CheckCart(AleStream& in, AleStream& live) {
  const std::string name = live.String("the cartridge type", 64);
  in.StringEq("the cartridge type", name);
  const auto it = CartLayouts().find(name);
  if (it == CartLayouts().end()) in.Fail("the cartridge type", "'" + name + "' has no snapshot check");
  const CartLayout& c = it->second;
  if (c.banks > 0) {
    live.Int("the cartridge's bank");
    in.IntIn("the cartridge's bank", 0, c.banks - 1);
  }
  if (name == "CartridgeDPC") {  // tops, bottoms, counters (11 bits), flags, music modes (bools), then 3 ints
    IntArray(in, live, "the DPC tops", 0, 255);
    IntArray(in, live, "the DPC bottoms", 0, 255);
    IntArray(in, live, "the DPC counters", 0, 0x7ff);
    IntArray(in, live, "the DPC flags", 0, 255);
    const int32_t n = live.Int("the DPC music modes");
    in.IntEq("the DPC music modes", n);
    for (int32_t i = 0; i < n; ++i) {
      live.Bool("a DPC music mode");
      in.Bool("a DPC music mode");
    }
    live.Int("the DPC random number");
    in.IntIn("the DPC random number", 0, 255);
    for (const char* f : {"the DPC system cycles", "the DPC fractional clocks"}) {
      live.Int(f);
      in.Int(f);
    }
    return;
  }
  for (int a = 0; a < c.arrays; ++a) {
    if (c.slice_banks > 0) {
      IntArray(in, live, "the cartridge's slices", 0, c.slice_banks - 1);
    } else {
      IntArray(in, live, "the cartridge's RAM", 0, 255);
    }
  }
}

// TIA::save's fields. After a restore TIA's next frame starts from its own clocks (startFrame), but the sprite
// positions, motions and the cosmic-ark counter index its tables, and the frame clocks place the frame's drawing:
// they keep the live state's offsets (the game's display window) and stay within the frame.
inline void CheckTia(AleStream& e, AleStream& l, int64_t cycles) {
  e.StringEq("the TIA", l.String("the TIA", 64));
  int32_t live_clock[4], clock[4];
  const char* clock_names[4] = {"the TIA's frame start clock", "the TIA's display start clock",
                                "the TIA's display stop clock", "the TIA's last update clock"};
  for (int i = 0; i < 4; ++i) {
    live_clock[i] = l.Int(clock_names[i]);
    clock[i] = e.Int(clock_names[i]);
  }
  for (int i = 1; i < 3; ++i) {
    if (int64_t{clock[i]} - clock[0] != int64_t{live_clock[i]} - live_clock[0]) {
      e.Fail(clock_names[i], "must be " + std::to_string(int64_t{live_clock[i]} - live_clock[0]) +
                                 " clocks after the frame's start (this game's display window)");
    }
  }
  if (clock[3] < clock[0] || clock[3] > clock[2]) e.Fail(clock_names[3], "must be within the frame");
  if (clock[0] > 3 * cycles) e.Fail(clock_names[0], "must not be after the system's clock");
  l.Int("the TIA's clocks to the end of the line");
  e.IntIn("the TIA's clocks to the end of the line", 0, 228);
  for (const char* f : {"the TIA's last frame's scanlines", "the TIA's scanline", "the TIA's VSYNC end clock"}) {
    l.Int(f);
    e.Int(f);
  }
  auto ints = [&](std::initializer_list<const char*> fields, int64_t lo, int64_t hi) {
    for (const char* f : fields) {
      l.Int(f);
      e.IntIn(f, lo, hi);
    }
  };
  auto bools = [&](int n, const char* field) {
    for (int i = 0; i < n; ++i) {
      l.Bool(field);
      e.Bool(field);
    }
  };
  constexpr int64_t kAny = std::numeric_limits<int32_t>::max(), kAnyLow = std::numeric_limits<int32_t>::min();
  ints({"the TIA's enabled objects", "VSYNC", "VBLANK", "NUSIZ0", "NUSIZ1"}, 0, 255);
  ints({"COLUP0", "COLUP1", "COLUPF", "COLUBK"}, kAnyLow, kAny);
  ints({"CTRLPF", "the TIA's playfield priority"}, 0, 255);
  bools(2, "a TIA reflect flag");
  ints({"PF"}, kAnyLow, kAny);
  ints({"GRP0", "GRP1", "the delayed GRP0", "the delayed GRP1"}, 0, 255);
  bools(4, "a TIA enable flag");
  ints({"HMP0", "HMP1", "HMM0", "HMM1", "HMBL"}, 0, 15);  // a motion register's high nibble: a table column
  bools(5, "a TIA delay or reset flag");
  ints({"the TIA's collisions"}, kAnyLow, kAny);
  ints({"the player 0 position", "the player 1 position", "the missile 0 position", "the missile 1 position",
        "the ball position"},
       0, 159);
  ints({"the current GRP0", "the current GRP1"}, 0, 255);
  ints({"the TIA's last HMOVE clock"}, kAnyLow, kAny);
  bools(2, "a TIA HMOVE flag");
  ints({"the cosmic-ark counter"}, 0, 3);
  bools(1, "the TIA's dump flag");
  ints({"the TIA's dump cycle"}, kAnyLow, kAny);
  e.StringEq("the TIA's sound", l.String("the TIA's sound", 64));
  ints({"a sound register", "a sound register", "a sound register", "a sound register", "a sound register",
        "a sound register"},
       kAnyLow, kAny);
  ints({"the sound's last cycle"}, kAnyLow, kAny);
}

// The length of the game's RomSettings in the live state, read from `l` at its position: what lies between there
// and the state's last two fields (the generator flag, true, and the generator's text, which ends the state). The
// settings are ints and bools, so the flag is found 4-byte aligned.
inline size_t SettingsLength(const AleStream& l) {
  for (size_t q = l.pos() + 4; q + 4 <= l.end(); q += 4) {
    if (l.PeekAt(q - 4) == AleStream::kTrue && l.PeekAt(q) == l.end() - q - 4) return q - 4 - l.pos();
  }
  l.Fail("the game's settings", "were not found in this env's own state");
}

// `state`: the snapshot's ALE bytes; `live`: the env's current ALE state (the same cartridge, game, mode and
// difficulty). `what` starts the error messages.
inline void CheckAleState(const std::string& state, const std::string& live_state, const std::string& what) {
  AleStream in(state, 0, state.size(), what), live(live_state, 0, live_state.size(), what + " (this env)");
  // ALEState::serialize: paddles, frame numbers, mode, difficulty, the emulator's bytes, the paddle range
  const int32_t left = in.Int("the left paddle"), right = in.Int("the right paddle");
  for (int i = 0; i < 2; ++i) live.Int("a paddle");
  live.Int("the frame number");
  live.Int("the episode's frame number");
  // ALE counts frames in int: leave room for 2**24 more frames (weeks of one env's play) before it would overflow
  const int32_t frame = in.IntIn("the frame number", 0, std::numeric_limits<int32_t>::max() - (1 << 24));
  in.IntIn("the episode's frame number", 0, frame);
  for (const char* f : {"the game mode", "the difficulty"}) in.IntEq(f, live.Int(f));
  const std::string live_inner = live.String("the emulator state", live.end());
  const std::string inner = in.String("the emulator state", in.end() - in.pos());
  const int32_t lo = live.Int("the paddle minimum"), hi = live.Int("the paddle maximum");
  in.IntEq("the paddle minimum", lo);
  in.IntEq("the paddle maximum", hi);
  if (left < lo || left > hi || right < lo || right > hi) {
    in.Fail("the paddles", "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  in.End("the ALE state");

  AleStream e(inner, 0, inner.size(), what), l(live_inner, 0, live_inner.size(), what + " (this env)");
  // System::saveState: the ROM's md5 (another game's snapshot stops here), the system, the CPU, the devices
  e.StringEq("the ROM's md5", l.String("the ROM's md5", 64));
  e.StringEq("the system", l.String("the system", 64));
  l.Int("the system's cycles");
  const int64_t cycles = static_cast<uint32_t>(e.Int("the system's cycles"));
  CheckRandomText(l, "the system's random generator");
  CheckRandomText(e, "the system's random generator");
  e.StringEq("the CPU", l.String("the CPU", 64));
  for (const char* f : {"the CPU's A", "the CPU's X", "the CPU's Y", "the CPU's SP", "the CPU's IR"}) {
    l.Int(f);
    e.IntIn(f, 0, 255);
  }
  l.Int("the CPU's PC");
  e.IntIn("the CPU's PC", 0, 0xffff);
  for (int i = 0; i < 7; ++i) {
    l.Bool("a CPU flag");
    e.Bool("a CPU flag");
  }
  l.Int("the CPU's status");
  e.IntIn("the CPU's status", 0, 255);
  // M6532 (RIOT): the RAM (its length is the array's), the timer
  e.StringEq("the RIOT", l.String("the RIOT", 64));
  IntArray(e, l, "the RIOT's RAM", 0, 255);
  l.Int("the RIOT's timer");
  e.IntIn("the RIOT's timer", 0, 255);
  l.Int("the RIOT's interval shift");
  const int32_t shift = e.Int("the RIOT's interval shift");
  if (shift != 0 && shift != 3 && shift != 6 && shift != 10) {
    e.Fail("the RIOT's interval shift", "must be 0, 3, 6 or 10 (the timer's intervals), got " + std::to_string(shift));
  }
  for (const char* f : {"the RIOT's timer cycles", "the RIOT's interrupt cycles"}) {
    l.Int(f);
    e.Int(f);
  }
  l.Bool("the RIOT's interrupt flag");
  e.Bool("the RIOT's interrupt flag");
  for (const char* f : {"the RIOT's DDRA", "the RIOT's DDRB"}) {
    l.Int(f);
    e.IntIn(f, 0, 255);
  }
  CheckTia(e, l, cycles);
  CheckCart(e, l);
  // The game's RomSettings (ints and bools, a layout of its own), then whether the generator follows, and ALE's
  // generator (the state's last field). The settings' layout is the live state's: the same length, a bool wherever
  // the live state has one.
  const size_t settings = SettingsLength(l);
  if (e.end() - e.pos() < settings) e.Fail("the game's settings", "are cut off");
  for (size_t k = 0; k < settings; k += 4) {
    if (l.PeekAt(l.pos()) == AleStream::kTrue || l.PeekAt(l.pos()) == AleStream::kFalse) {
      l.Int("a game setting");
      e.Bool("a game setting");
    } else {
      l.Int("a game setting");
      e.Int("a game setting");
    }
  }
  l.Bool("the generator flag");
  if (!e.Bool("the generator flag")) e.Fail("the generator flag", "must be true (snapshots keep ALE's generator)");
  CheckRandomText(l, "ALE's random generator");
  CheckRandomText(e, "ALE's random generator");
  e.End("ALE's random generator");
}

}  // namespace pp::atari
