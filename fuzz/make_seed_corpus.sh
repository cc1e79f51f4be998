#!/usr/bin/env bash
# Fills a libFuzzer seed corpus for fuzz/reader_fuzz with small, valid inputs:
#   - every model.onnx of at most 2 MB under ../shared/models (or $FOOTPRINT_SHARED/models),
#   - footprint's example model (build/<preset>/examples/tiny_cnn.onnx, written by the build),
#   - a few input_*.pb / output_*.pb tensor files of at most 64 KB,
#   - a handful of ONNX backend-test node models (/usr/share/libonnx-testdata), when installed.
# Missing sources are skipped. Files are named after where they came from.
#
#   fuzz/make_seed_corpus.sh build/fuzz/corpus [build/fuzz]
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 CORPUS_DIR [BUILD_DIR]" >&2
  exit 2
fi
corpus="$1"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${2:-$root/build/fuzz}"
shared="${FOOTPRINT_SHARED:-$root/../shared}"
testdata=/usr/share/libonnx-testdata/data/node
max_model=$((2 * 1024 * 1024))
max_tensor=$((64 * 1024))

mkdir -p "$corpus"
count=0

# add SOURCE NAME: copies SOURCE into the corpus as NAME (slashes become dashes).
add() {
  cp "$1" "$corpus/${2//\//-}"
  count=$((count + 1))
}

if [ -d "$shared/models" ]; then
  while IFS= read -r f; do
    rel="${f#"$shared/models/"}"
    add "$f" "shared-$rel"
  done < <(find "$shared/models" -name model.onnx -size -$((max_model + 1))c | sort)
  # The tensor files are alike; a few small ones are enough.
  while IFS= read -r f; do
    rel="${f#"$shared/models/"}"
    add "$f" "shared-$rel"
  done < <(find "$shared/models" -name '*.pb' -size -$((max_tensor + 1))c | sort | head -n 8)
else
  echo "make_seed_corpus: $shared/models not found; shared models skipped" >&2
fi

if [ -f "$build/examples/tiny_cnn.onnx" ]; then
  add "$build/examples/tiny_cnn.onnx" "example-tiny_cnn.onnx"
else
  echo "make_seed_corpus: $build/examples/tiny_cnn.onnx not built; example skipped" >&2
fi

# Node tests cover many ops and attribute kinds (graphs in If/Loop/Scan, sequences, sparse,
# strings) in a few hundred bytes each: a spread of them, chosen by name so the set is stable.
if [ -d "$testdata" ]; then
  node_tests=(
    test_abs test_add_bcast test_cast_FLOAT_to_STRING test_constant
    test_constantofshape_float_ones test_conv_with_strides_padding test_gemm_default_scalar_bias
    test_if test_if_seq test_if_opt test_loop11 test_loop13_seq test_scan9_sum
    test_sequence_insert_at_back test_optional_get_element test_reshape_extended_dims test_slice
    test_split_equal_parts_1d test_strnormalizer_export_monday_casesensintive_nochangecase
    test_sequence_map_add_2_sequences_expanded test_dequantizelinear
    test_range_float_type_positive_delta_expanded test_softmax_example_expanded
    test_layer_normalization_2d_axis0_expanded test_einsum_batch_diagonal
    test_unique_sorted_with_axis test_resize_upsample_scales_nearest
  )
  for t in "${node_tests[@]}"; do
    if [ -f "$testdata/$t/model.onnx" ]; then
      add "$testdata/$t/model.onnx" "onnx-$t.onnx"
      # One tensor file per node test as well (the first input).
      input="$testdata/$t/test_data_set_0/input_0.pb"
      if [ -f "$input" ] && [ "$(stat -c %s "$input")" -le $max_tensor ]; then
        add "$input" "onnx-$t-input_0.pb"
      fi
    fi
  done
else
  echo "make_seed_corpus: $testdata not found; ONNX node tests skipped" >&2
fi

echo "make_seed_corpus: $count seed files in $corpus"
