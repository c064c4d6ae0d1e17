// The pattern images of minigrid's WFC presets, read as minigrid reads them (imageio's imread(path)[:, :, :3]): a
// small PNG reader for 8-bit RGB and RGBA images that are not interlaced (every image minigrid's presets name),
// with its own inflate (RFC 1951) so the MiniGrid family needs no library. Anything else raises
// std::invalid_argument naming the file.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace pp::minigrid::wfc {

// Pixels row-major, 3 bytes (R, G, B) each.
struct RgbImage {
  int height = 0, width = 0;
  std::vector<uint8_t> rgb;
  const uint8_t* At(int row, int col) const { return &rgb[(static_cast<size_t>(row) * width + col) * 3]; }
};

namespace detail {

// Inflate of a zlib stream, after puff.c's design (canonical Huffman codes decoded a bit at a time: the images are
// a few hundred bytes, read once per process).
class Inflater {
 public:
  Inflater(const std::vector<uint8_t>& in, const std::string& what) : in_(in), what_(what) {}

  std::vector<uint8_t> Run() {
    if (in_.size() < 2 || (in_[0] & 0x0f) != 8 || ((in_[0] << 8) | in_[1]) % 31 != 0) Fail("bad zlib header");
    if (in_[1] & 0x20) Fail("zlib preset dictionary");
    pos_ = 2;
    bool last = false;
    while (!last) {
      last = Bits(1) == 1;
      switch (Bits(2)) {
        case 0: Stored(); break;
        case 1: Fixed(); break;
        case 2: Dynamic(); break;
        default: Fail("bad deflate block type");
      }
    }
    return std::move(out_);
  }

 private:
  struct Huffman {
    std::array<uint16_t, 16> count{};
    std::vector<uint16_t> symbol;
  };

  [[noreturn]] void Fail(const std::string& why) const {
    throw std::invalid_argument("WFC pattern image " + what_ + ": cannot read it (" + why + ")");
  }

  uint32_t Bits(int need) {
    uint32_t val = bit_buf_;
    while (bit_count_ < need) {
      if (pos_ >= in_.size()) Fail("truncated data");
      val |= static_cast<uint32_t>(in_[pos_++]) << bit_count_;
      bit_count_ += 8;
    }
    bit_buf_ = val >> need;
    bit_count_ -= need;
    return val & ((1u << need) - 1);
  }

  void Stored() {
    bit_buf_ = 0;
    bit_count_ = 0;
    if (pos_ + 4 > in_.size()) Fail("truncated stored block");
    const unsigned len = in_[pos_] | (in_[pos_ + 1] << 8);
    const unsigned nlen = in_[pos_ + 2] | (in_[pos_ + 3] << 8);
    if (len != (~nlen & 0xffffu)) Fail("bad stored block length");
    pos_ += 4;
    if (pos_ + len > in_.size()) Fail("truncated stored block");
    out_.insert(out_.end(), in_.begin() + static_cast<std::ptrdiff_t>(pos_),
                in_.begin() + static_cast<std::ptrdiff_t>(pos_ + len));
    pos_ += len;
  }

  void Build(Huffman& h, const uint8_t* lengths, int n) {
    h.count.fill(0);
    for (int s = 0; s < n; ++s) ++h.count[lengths[s]];
    std::array<uint16_t, 16> offs{};
    for (int len = 1; len < 15; ++len) offs[len + 1] = offs[len] + h.count[len];
    h.symbol.assign(static_cast<size_t>(n), 0);
    for (int s = 0; s < n; ++s) {
      if (lengths[s] != 0) h.symbol[offs[lengths[s]]++] = static_cast<uint16_t>(s);
    }
  }

  int Decode(const Huffman& h) {
    int code = 0, first = 0, index = 0;
    for (int len = 1; len <= 15; ++len) {
      code |= static_cast<int>(Bits(1));
      const int count = h.count[len];
      if (code - count < first) return h.symbol[static_cast<size_t>(index + (code - first))];
      index += count;
      first += count;
      first <<= 1;
      code <<= 1;
    }
    Fail("bad Huffman code");
  }

  void Codes(const Huffman& lens, const Huffman& dists) {
    static constexpr uint16_t kLenBase[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                              31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
    static constexpr uint8_t kLenExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                              2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
    static constexpr uint16_t kDistBase[30] = {1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                               33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                               1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
    static constexpr uint8_t kDistExtra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                               6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
    while (true) {
      int sym = Decode(lens);
      if (sym < 256) {
        out_.push_back(static_cast<uint8_t>(sym));
        continue;
      }
      if (sym == 256) return;
      sym -= 257;
      if (sym >= 29) Fail("bad length code");
      const size_t len = kLenBase[sym] + Bits(kLenExtra[sym]);
      const int dsym = Decode(dists);
      if (dsym >= 30) Fail("bad distance code");
      const size_t dist = kDistBase[dsym] + Bits(kDistExtra[dsym]);
      if (dist > out_.size()) Fail("distance too far back");
      for (size_t i = 0; i < len; ++i) out_.push_back(out_[out_.size() - dist]);
    }
  }

  void Fixed() {
    uint8_t lengths[288 + 30];
    for (int s = 0; s < 144; ++s) lengths[s] = 8;
    for (int s = 144; s < 256; ++s) lengths[s] = 9;
    for (int s = 256; s < 280; ++s) lengths[s] = 7;
    for (int s = 280; s < 288; ++s) lengths[s] = 8;
    for (int s = 288; s < 318; ++s) lengths[s] = 5;
    Huffman lens, dists;
    Build(lens, lengths, 288);
    Build(dists, lengths + 288, 30);
    Codes(lens, dists);
  }

  void Dynamic() {
    static constexpr uint8_t kOrder[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
    const int nlen = static_cast<int>(Bits(5)) + 257, ndist = static_cast<int>(Bits(5)) + 1;
    const int ncode = static_cast<int>(Bits(4)) + 4;
    if (nlen > 286 || ndist > 30) Fail("bad code counts");
    uint8_t lengths[286 + 30] = {};
    for (int i = 0; i < ncode; ++i) lengths[kOrder[i]] = static_cast<uint8_t>(Bits(3));
    Huffman code_lens;
    Build(code_lens, lengths, 19);
    int at = 0;
    while (at < nlen + ndist) {
      const int sym = Decode(code_lens);
      if (sym < 16) {
        lengths[at++] = static_cast<uint8_t>(sym);
        continue;
      }
      uint8_t value = 0;
      int repeat;
      if (sym == 16) {
        if (at == 0) Fail("repeat with no previous length");
        value = lengths[at - 1];
        repeat = 3 + static_cast<int>(Bits(2));
      } else if (sym == 17) {
        repeat = 3 + static_cast<int>(Bits(3));
      } else {
        repeat = 11 + static_cast<int>(Bits(7));
      }
      if (at + repeat > nlen + ndist) Fail("too many lengths");
      while (repeat--) lengths[at++] = value;
    }
    Huffman lens, dists;
    Build(lens, lengths, nlen);
    Build(dists, lengths + nlen, ndist);
    Codes(lens, dists);
  }

  const std::vector<uint8_t>& in_;
  std::string what_;
  size_t pos_ = 0;
  uint32_t bit_buf_ = 0;
  int bit_count_ = 0;
  std::vector<uint8_t> out_;
};

inline uint32_t BigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

inline int Paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

}  // namespace detail

// Reads `path` (an 8-bit RGB or RGBA PNG, not interlaced) and keeps R, G, B, as imread(path)[:, :, :3] does.
inline RgbImage ReadPngRgb(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f.good()) throw std::invalid_argument("WFC pattern image " + path + " not found");
  const std::vector<uint8_t> file((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument("WFC pattern image " + path + ": cannot read it (" + why + ")");
  };
  static constexpr uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (file.size() < 8 || !std::equal(kSignature, kSignature + 8, file.begin())) fail("not a PNG file");
  uint32_t width = 0, height = 0;
  int channels = 0;
  std::vector<uint8_t> idat;
  size_t at = 8;
  bool ended = false;
  while (!ended) {
    if (at + 12 > file.size()) fail("truncated chunk");
    const uint32_t len = detail::BigEndian32(&file[at]);
    if (len > file.size() - at - 12) fail("truncated chunk");
    const std::string type(file.begin() + static_cast<std::ptrdiff_t>(at + 4),
                           file.begin() + static_cast<std::ptrdiff_t>(at + 8));
    const uint8_t* data = &file[at + 8];
    if (type == "IHDR") {
      if (len != 13) fail("bad IHDR");
      width = detail::BigEndian32(data);
      height = detail::BigEndian32(data + 4);
      const int depth = data[8], color = data[9], interlace = data[12];
      if (depth != 8 || (color != 2 && color != 6) || interlace != 0) {
        fail("only 8-bit RGB or RGBA images without interlacing are read; this one has bit depth " +
             std::to_string(depth) + ", colour type " + std::to_string(color) + ", interlace " +
             std::to_string(interlace));
      }
      if (width == 0 || height == 0 || width > 4096 || height > 4096) fail("image size out of range");
      channels = color == 2 ? 3 : 4;
    } else if (type == "IDAT") {
      idat.insert(idat.end(), data, data + len);
    } else if (type == "IEND") {
      ended = true;
    }
    at += 12 + static_cast<size_t>(len);
  }
  if (channels == 0) fail("no IHDR chunk");
  std::vector<uint8_t> raw = detail::Inflater(idat, path).Run();
  const size_t stride = static_cast<size_t>(width) * channels;
  if (raw.size() < (stride + 1) * height) fail("image data too short");
  // Undo the per-row filters in place (each row: a filter byte, then stride bytes).
  std::vector<uint8_t> pixels(stride * height);
  for (uint32_t y = 0; y < height; ++y) {
    const uint8_t filter = raw[y * (stride + 1)];
    const uint8_t* src = &raw[y * (stride + 1) + 1];
    uint8_t* row = &pixels[y * stride];
    const uint8_t* up = y > 0 ? &pixels[(y - 1) * stride] : nullptr;
    for (size_t i = 0; i < stride; ++i) {
      const int a = i >= static_cast<size_t>(channels) ? row[i - channels] : 0;
      const int b = up ? up[i] : 0;
      const int c = (up && i >= static_cast<size_t>(channels)) ? up[i - channels] : 0;
      int v = src[i];
      switch (filter) {
        case 0: break;
        case 1: v += a; break;
        case 2: v += b; break;
        case 3: v += (a + b) / 2; break;
        case 4: v += detail::Paeth(a, b, c); break;
        default: fail("bad row filter");
      }
      row[i] = static_cast<uint8_t>(v);
    }
  }
  RgbImage img;
  img.height = static_cast<int>(height);
  img.width = static_cast<int>(width);
  img.rgb.resize(static_cast<size_t>(width) * height * 3);
  for (size_t p = 0; p < static_cast<size_t>(width) * height; ++p) {
    for (int k = 0; k < 3; ++k) img.rgb[p * 3 + k] = pixels[p * channels + k];
  }
  return img;
}

}  // namespace pp::minigrid::wfc
