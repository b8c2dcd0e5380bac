#include "sim/trace.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <string>

#include "common/error.hpp"

namespace tilesim::sim {

namespace {

// JSON string escaping; bytes >= 0x80 pass through (names are UTF-8 or ASCII).
void write_string(std::string& out, const std::string& text) {
  out += '"';
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          static const char hex[] = "0123456789abcdef";
          out += "\\u00";
          out += hex[(c >> 4) & 0xf];
          out += hex[c & 0xf];
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

// Shortest text that reads back as the same double: exact timestamps, short files.
void write_number(std::string& out, double value) {
  if (!std::isfinite(value)) value = 0;  // JSON has no inf or nan
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

void write_number(std::string& out, std::int64_t value) {
  char buffer[24];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

}  // namespace

void TraceWriter::add_slice(std::int32_t track, const std::string& name, const std::string& category, double start_us,
                            double duration_us) {
  slices_.push_back(Slice{track, name, category, start_us, duration_us});
  end_us_ = std::max(end_us_, start_us + duration_us);
}

void TraceWriter::name_track(std::int32_t track, const std::string& name) { track_names_[track] = name; }

void TraceWriter::write(const std::string& path) const {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) {
    throw Error(ExitCode::bad_input, "cannot open trace file " + path + " for writing: " + std::strerror(errno));
  }
  std::string out;
  out.reserve(128 * (slices_.size() + track_names_.size()) + 64);
  out += "{\"traceEvents\":[\n";
  bool first = true;
  auto begin_event = [&] {
    if (!first) out += ",\n";
    first = false;
  };
  for (const auto& [track, name] : track_names_) {
    begin_event();
    out += R"({"ph":"M","name":"thread_name","pid":0,"tid":)";
    write_number(out, static_cast<std::int64_t>(track));
    out += R"(,"args":{"name":)";
    write_string(out, name);
    out += "}}";
  }
  for (const auto& slice : slices_) {
    begin_event();
    out += R"({"ph":"X","pid":0,"tid":)";
    write_number(out, static_cast<std::int64_t>(slice.track));
    out += R"(,"ts":)";
    write_number(out, slice.start_us);
    out += R"(,"dur":)";
    write_number(out, slice.duration_us);
    out += R"(,"name":)";
    write_string(out, slice.name);
    out += R"(,"cat":)";
    write_string(out, slice.category);
    out += '}';
  }
  out += "\n],\"displayTimeUnit\":\"ns\"}\n";
  file.write(out.data(), static_cast<std::streamsize>(out.size()));
  file.close();
  if (!file) {
    throw Error(ExitCode::internal_error, "could not write trace file " + path + " (disk full?)");
  }
}

}  // namespace tilesim::sim
