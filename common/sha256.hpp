#pragma once
// SHA-256 through OpenSSL's libcrypto (Debian's libssl-dev): content hashes of resolved machines.
#include <string>

namespace tilesim {

// The lower-case hex SHA-256 digest of `bytes`.
std::string sha256_hex(const std::string& bytes);

}  // namespace tilesim
