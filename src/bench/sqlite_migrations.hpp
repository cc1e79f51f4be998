#pragma once
// The schema's history: migration i takes a file from user_version i to i + 1. Append only:
// a released migration never changes, so every file reaches the same schema.
#include <string_view>
#include <vector>

namespace footprint::bench {

const std::vector<std::string_view>& sqlite_migrations();

}  // namespace footprint::bench
