#include "workloads/random_streams.hpp"

#include <cmath>

namespace tilesim::workloads::streams {

std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::uint64_t name_hash(const std::string& name) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  return h;
}

std::mt19937_64 named_engine(std::uint64_t seed, const std::string& name) {
  return std::mt19937_64(mix64(seed ^ mix64(name_hash(name))));
}

double unit(std::mt19937_64& engine) { return static_cast<double>(engine() >> 11) * 0x1.0p-53; }

std::vector<float> standard_normal(std::mt19937_64& engine, std::int64_t count) {
  std::vector<float> out(static_cast<std::size_t>(count));
  std::size_t i = 0;
  while (i < out.size()) {
    const double u = 2.0 * unit(engine) - 1.0;
    const double v = 2.0 * unit(engine) - 1.0;
    const double s = u * u + v * v;
    if (s >= 1.0 || s == 0.0) continue;
    const double m = std::sqrt(-2.0 * std::log(s) / s);
    out[i++] = static_cast<float>(u * m);
    if (i < out.size()) out[i++] = static_cast<float>(v * m);
  }
  return out;
}

std::vector<std::int32_t> uniform_indices(std::mt19937_64& engine, std::int64_t count, std::int64_t range) {
  std::vector<std::int32_t> out(static_cast<std::size_t>(count));
  const auto r = static_cast<std::uint32_t>(range);
  const std::uint32_t threshold = static_cast<std::uint32_t>(-r) % r;  // 2^32 mod r
  for (auto& index : out) {
    std::uint64_t m;
    do {
      m = (engine() >> 32) * static_cast<std::uint64_t>(r);
    } while (static_cast<std::uint32_t>(m) < threshold);
    index = static_cast<std::int32_t>(m >> 32);
  }
  return out;
}

std::vector<float> uniform_reals(std::mt19937_64& engine, std::int64_t count, double low, double high) {
  std::vector<float> out(static_cast<std::size_t>(count));
  for (auto& x : out) {
    // Rounding to float can reach `high` itself; the half-open range is what callers rely on.
    float v = static_cast<float>(low + (high - low) * unit(engine));
    if (v >= static_cast<float>(high)) v = std::nextafter(static_cast<float>(high), static_cast<float>(low));
    x = v;
  }
  return out;
}

KeyedStream::KeyedStream(std::uint64_t seed, const std::string& name) : base_(mix64(seed ^ mix64(name_hash(name)))) {}

std::uint64_t KeyedStream::counter(std::uint64_t key, std::uint64_t position) const {
  return mix64(base_ ^ mix64(mix64(key) + position));
}

void KeyedStream::standard_normal(std::uint64_t key, std::int64_t count, float* out) const {
  constexpr double two_pi = 6.283185307179586476925;
  for (std::int64_t i = 0; i < count; i += 2) {
    // u1 in (0, 1]: the logarithm stays finite.
    const double u1 = (static_cast<double>(counter(key, static_cast<std::uint64_t>(i)) >> 11) + 1.0) * 0x1.0p-53;
    const double u2 = static_cast<double>(counter(key, static_cast<std::uint64_t>(i) + 1) >> 11) * 0x1.0p-53;
    const double r = std::sqrt(-2.0 * std::log(u1));
    out[i] = static_cast<float>(r * std::cos(two_pi * u2));
    if (i + 1 < count) out[i + 1] = static_cast<float>(r * std::sin(two_pi * u2));
  }
}

std::int32_t KeyedStream::uniform_index(std::uint64_t key, std::int64_t range) const {
  const auto r = static_cast<std::uint32_t>(range);
  const std::uint32_t threshold = static_cast<std::uint32_t>(-r) % r;
  for (std::uint64_t attempt = 0;; ++attempt) {
    const std::uint64_t m = (counter(key, attempt) >> 32) * static_cast<std::uint64_t>(r);
    if (static_cast<std::uint32_t>(m) >= threshold) return static_cast<std::int32_t>(m >> 32);
  }
}

}  // namespace tilesim::workloads::streams
