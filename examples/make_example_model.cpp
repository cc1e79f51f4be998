// Writes footprint's example models into the folder given:
//
//   OUT_DIR/tiny_cnn.onnx                 examples/tiny_cnn.hpp (tests, corruption cases, fuzz
//   seeds) OUT_DIR/mobilenet_v2/model.onnx       examples/mobilenet_v2.hpp (scripts/run's model)
//   OUT_DIR/mobilenet_v2/input_0.pb       its input for N=1, a backend-test folder once a runtime
//                                         adds output_0.pb (bench/example_vs_ort.sh)
//
// The fuzz preset builds only the reader's layers, so it compiles this without the MobileNetV2
// part (FOOTPRINT_EXAMPLE_MOBILENET_V2 unset): seeding the fuzzer needs only tiny_cnn.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "tiny_cnn.hpp"
#if FOOTPRINT_EXAMPLE_MOBILENET_V2
#include "mobilenet_v2.hpp"
#endif

namespace {

void write_bytes(const std::filesystem::path& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_example_model OUT_DIR\n");
    return 2;
  }
  try {
    const std::filesystem::path dir = argv[1];
    std::filesystem::create_directories(dir);
    write_bytes(dir / "tiny_cnn.onnx", footprint::examples::make_tiny_cnn());
    std::printf("wrote %s\n", (dir / "tiny_cnn.onnx").c_str());
#if FOOTPRINT_EXAMPLE_MOBILENET_V2
    const std::filesystem::path mobilenet = dir / "mobilenet_v2";
    std::filesystem::create_directories(mobilenet);
    footprint::examples::write_mobilenet_v2(mobilenet / "model.onnx");
    footprint::runtime::write_tensor_file(mobilenet / "input_0.pb",
                                          footprint::examples::mobilenet_v2_input(1));
    std::printf("wrote %s, input_0.pb\n", (mobilenet / "model.onnx").c_str());
#endif
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_example_model: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
