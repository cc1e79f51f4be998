#pragma once
// Just enough PNG decoding to tell a drawn page from a blank one: 8-bit RGB or RGBA,
// non-interlaced (what Chromium writes for screenshots), inflated with zlib and unfiltered.
#include <zlib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace footprint::testing {

struct PngImage {
  uint32_t width = 0;
  uint32_t height = 0;
  size_t channels = 0;          // 3 (RGB) or 4 (RGBA)
  std::vector<uint8_t> pixels;  // rows of width * channels bytes

  uint32_t rgb(size_t x, size_t y) const {
    const uint8_t* p = &pixels[(y * width + x) * channels];
    return (uint32_t{p[0]} << 16) | (uint32_t{p[1]} << 8) | p[2];
  }
};

namespace png_detail {

inline uint32_t be32(std::span<const std::byte> b, size_t at) {
  return (std::to_integer<uint32_t>(b[at]) << 24) | (std::to_integer<uint32_t>(b[at + 1]) << 16) |
         (std::to_integer<uint32_t>(b[at + 2]) << 8) | std::to_integer<uint32_t>(b[at + 3]);
}

inline uint8_t paeth(int a, int b, int c) {
  const int p = a + b - c;
  const int pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return static_cast<uint8_t>(pa <= pb && pa <= pc ? a : (pb <= pc ? b : c));
}

// Undoes the per-row filters (PNG spec, section 9) of the inflated rows into img.pixels.
inline bool unfilter(const std::vector<uint8_t>& raw, PngImage& img) {
  const size_t stride = size_t{img.width} * img.channels, bpp = img.channels;
  img.pixels.assign(stride * img.height, 0);
  for (size_t y = 0; y < img.height; ++y) {
    const uint8_t filter = raw[y * (stride + 1)];
    const uint8_t* in = &raw[y * (stride + 1) + 1];
    uint8_t* row = &img.pixels[y * stride];
    const uint8_t* up = y > 0 ? row - stride : nullptr;
    for (size_t i = 0; i < stride; ++i) {
      const int a = i >= bpp ? row[i - bpp] : 0, b = up ? up[i] : 0;
      const int c = up && i >= bpp ? up[i - bpp] : 0;
      int v = in[i];
      switch (filter) {
        case 0:
          break;
        case 1:
          v += a;
          break;
        case 2:
          v += b;
          break;
        case 3:
          v += (a + b) / 2;
          break;
        case 4:
          v += paeth(a, b, c);
          break;
        default:
          return false;
      }
      row[i] = static_cast<uint8_t>(v);
    }
  }
  return true;
}

}  // namespace png_detail

// nullopt for anything but an 8-bit RGB(A), non-interlaced PNG with intact image data.
inline std::optional<PngImage> decode_png(std::span<const std::byte> file) {
  static constexpr uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (file.size() < 8) return std::nullopt;
  for (size_t i = 0; i < 8; ++i) {
    if (std::to_integer<uint8_t>(file[i]) != kSignature[i]) return std::nullopt;
  }
  PngImage img;
  std::vector<uint8_t> idat;
  for (size_t at = 8; at + 12 <= file.size();) {
    const uint32_t length = png_detail::be32(file, at);
    if (length > file.size() - at - 12) return std::nullopt;
    const std::string type(reinterpret_cast<const char*>(&file[at + 4]), 4);
    const auto data = file.subspan(at + 8, length);
    if (type == "IHDR" && length >= 13) {
      img.width = png_detail::be32(data, 0);
      img.height = png_detail::be32(data, 4);
      const auto depth = std::to_integer<uint8_t>(data[8]);
      const auto color = std::to_integer<uint8_t>(data[9]);
      const auto interlace = std::to_integer<uint8_t>(data[12]);
      if (depth != 8 || interlace != 0 || (color != 2 && color != 6)) return std::nullopt;
      img.channels = color == 2 ? 3 : 4;
    } else if (type == "IDAT") {
      for (const std::byte b : data) idat.push_back(std::to_integer<uint8_t>(b));
    } else if (type == "IEND") {
      break;
    }
    at += 12 + length;
  }
  if (img.width == 0 || img.height == 0 || img.width > 20000 || img.height > 20000)
    return std::nullopt;
  std::vector<uint8_t> raw((size_t{img.width} * img.channels + 1) * img.height);
  uLongf raw_size = raw.size();
  if (::uncompress(raw.data(), &raw_size, idat.data(), idat.size()) != Z_OK ||
      raw_size != raw.size()) {
    return std::nullopt;
  }
  if (!png_detail::unfilter(raw, img)) return std::nullopt;
  return img;
}

// Distinct RGB colours, and the share of coloured pixels: clearly not grey, so neither the
// page's background, nor text, nor the empty boxes a page without its script would show.
struct PngCoverage {
  size_t colours = 0;
  double coloured_fraction = 0;
};

inline PngCoverage coverage(const PngImage& img) {
  std::set<uint32_t> colours;
  size_t coloured = 0;
  for (size_t y = 0; y < img.height; ++y) {
    for (size_t x = 0; x < img.width; ++x) {
      const uint32_t c = img.rgb(x, y);
      if (colours.size() < 100000) colours.insert(c);
      const int r = static_cast<int>(c >> 16), g = static_cast<int>((c >> 8) & 0xFF),
                b = static_cast<int>(c & 0xFF);
      if (std::max({r, g, b}) - std::min({r, g, b}) > 48) ++coloured;
    }
  }
  return {colours.size(), static_cast<double>(coloured) / (double{1} * img.width * img.height)};
}

}  // namespace footprint::testing
