// Writes footprint's example model (examples/tiny_cnn.hpp) to the path given.
#include <cstdio>
#include <exception>
#include <fstream>

#include "tiny_cnn.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_example_model OUT.onnx\n");
    return 2;
  }
  try {
    const auto bytes = footprint::examples::make_tiny_cnn();
    std::ofstream out(argv[1], std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::fprintf(stderr, "make_example_model: error: cannot write %s\n", argv[1]);
      return 1;
    }
    std::printf("wrote %s (%zu bytes)\n", argv[1], bytes.size());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_example_model: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
