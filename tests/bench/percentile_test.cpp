#include "footprint/bench/percentile.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "footprint/bench/record.hpp"
#include "footprint/core/error.hpp"

namespace footprint::bench {
namespace {

// Expected figures are numpy.percentile's (method="linear", its default) on the same samples.
TEST(Percentile, OddCount) {
  const std::vector<double> v = {5, 1, 4, 2, 3};  // unsorted on purpose
  EXPECT_DOUBLE_EQ(percentile(v, 0), 1);
  EXPECT_DOUBLE_EQ(percentile(v, 0.5), 3);
  EXPECT_DOUBLE_EQ(percentile(v, 0.9), 4.6);
  EXPECT_DOUBLE_EQ(percentile(v, 1), 5);
  EXPECT_DOUBLE_EQ(percentile(v, 0.25), 2);
}

TEST(Percentile, EvenCountInterpolates) {
  const std::vector<double> v = {10, 40, 20, 30};
  EXPECT_DOUBLE_EQ(percentile(v, 0), 10);
  EXPECT_DOUBLE_EQ(percentile(v, 0.5), 25);  // the mean of the middle two
  EXPECT_DOUBLE_EQ(percentile(v, 0.9), 37);
  EXPECT_DOUBLE_EQ(percentile(v, 1), 40);
  const std::vector<double> ten = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};  // `run`'s default --repeat
  EXPECT_DOUBLE_EQ(percentile(ten, 0.5), 5.5);
  EXPECT_DOUBLE_EQ(percentile(ten, 0.9), 9.1);
}

TEST(Percentile, OneSampleIsEveryQuantile) {
  const std::vector<double> v = {7.5};
  for (double q : {0.0, 0.5, 0.9, 1.0}) EXPECT_EQ(percentile(v, q), 7.5);
}

TEST(Percentile, NoSamplesOrABadQuantileIsAnError) {
  EXPECT_THROW(percentile(std::vector<double>{}, 0.5), Error);
  const std::vector<double> v = {1, 2};
  EXPECT_THROW(percentile(v, -0.1), Error);
  EXPECT_THROW(percentile(v, 1.5), Error);
  EXPECT_THROW(percentile(v, NAN), Error);
}

TEST(Percentile, SummaryMedianIsTheSame) {
  const std::vector<double> v = {3, 1, 4, 1, 5, 9};
  EXPECT_DOUBLE_EQ(summarize(v).median, percentile(v, 0.5));
  EXPECT_DOUBLE_EQ(summarize(v).median, 3.5);
}

}  // namespace
}  // namespace footprint::bench
