#include "meters/link_config.h"

#include <algorithm>
#include <set>

#include "meters/invariant.h"

namespace jackpot {
namespace {

// Scales a per-$1 amount by the base wager: amount × base / $1.
Result<PpmProduct, MoneyError> scale_by_base(Money amount, Money base_wager) {
  return amount.times_ppm(base_wager.micros());
}

class Problems {
 public:
  explicit Problems(const LinkConfig& config) : link_("link '" + config.id.value() + "'") {}

  void add(const std::string& message) { list_.push_back(link_ + ": " + message); }
  void add(const LevelConfig& level, const std::string& message) {
    list_.push_back(link_ + " level " + std::to_string(level.level) +
                    (level.name.empty() ? "" : " (" + level.name + ")") + ": " + message);
  }
  std::vector<std::string> take() { return std::move(list_); }

 private:
  std::string link_;
  std::vector<std::string> list_;
};

bool positive_whole_cents(Money amount) { return amount.micros() > 0 && amount.is_whole_cents(); }

void check_scaled_amount(Problems& problems, const LevelConfig& level, const std::string& what,
                         Money amount, Money base_wager) {
  if (amount.micros() < 0 || !amount.is_whole_cents()) {
    problems.add(level, what + " " + amount.to_string() + " must be a whole number of cents >= 0");
    return;
  }
  const auto scaled = scale_by_base(amount, base_wager);
  if (!scaled) {
    problems.add(level, what + " " + amount.to_string() + " overflows at base wager " +
                            base_wager.to_string());
  } else if (scaled->remainder != 0 || !scaled->quotient.is_whole_cents()) {
    problems.add(level, what + " " + amount.to_string() + " times base wager " +
                            base_wager.to_string() + " is not a whole number of cents");
  }
}

void check_rate(Problems& problems, const LevelConfig& level, const std::string& what,
                std::int64_t rate_ppm, Money base_wager) {
  if (rate_ppm < 0 || rate_ppm > Money::kPpmPerWhole) {
    problems.add(level, what + " " + std::to_string(rate_ppm) + " ppm is outside 0..1000000 ppm");
    return;
  }
  const auto per_unit = base_wager.times_ppm(rate_ppm);
  if (per_unit && per_unit->remainder != 0) {
    problems.add(level, what + " " + std::to_string(rate_ppm) + " ppm of base wager " +
                            base_wager.to_string() +
                            " is not a whole number of micros; choose a rate that is");
  }
}

void check_ceiling(Problems& problems, const LinkConfig& config, const LevelConfig& level) {
  if (!level.ceiling) {
    if (level.overflow_level != 0) {
      problems.add(level, "overflow level " + std::to_string(level.overflow_level) +
                              " is set but the level has no ceiling");
    }
    return;
  }
  if (!positive_whole_cents(*level.ceiling)) {
    problems.add(level, "ceiling " + level.ceiling->to_string() +
                            " must be a positive whole number of cents");
  }
  const auto seed = scale_by_base(level.seed, config.base_wager);
  if (seed && seed->quotient >= *level.ceiling) {
    problems.add(level, "ceiling " + level.ceiling->to_string() + " must be above the seed " +
                            seed->quotient.to_string());
  }
  if (level.must_hit_by) {
    problems.add(level, "a Must-Hit-By level cannot have a ceiling");
  }
  if (level.overflow_level == 0) return;
  if (level.overflow_level == level.level) {
    problems.add(level, "overflow level is the level itself; use 0 for its reserve");
  } else if (level.overflow_level > config.levels.size()) {
    problems.add(level,
                 "overflow level " + std::to_string(level.overflow_level) + " does not exist");
  } else if (config.levels[level.overflow_level - 1].must_hit_by) {
    problems.add(level, "overflow level " + std::to_string(level.overflow_level) +
                            " is a Must-Hit-By level, which only contributions may feed");
  }
}

void check_must_hit_by(Problems& problems, const LinkConfig& config, const LevelConfig& level) {
  if (!level.must_hit_by) {
    if (level.trigger != TriggerMode::at_amount) {
      problems.add(level, "a hidden trigger needs a Must-Hit-By amount");
    }
    return;
  }
  if (!positive_whole_cents(*level.must_hit_by)) {
    problems.add(level, "Must-Hit-By amount " + level.must_hit_by->to_string() +
                            " must be a positive whole number of cents");
    return;
  }
  check_scaled_amount(problems, level, "Must-Hit-By amount", *level.must_hit_by, config.base_wager);
  if (*level.must_hit_by <= level.seed) {
    problems.add(level, "Must-Hit-By amount " + level.must_hit_by->to_string() +
                            " must be above the seed " + level.seed.to_string());
  }
}

// Follows overflow targets from each capped level; a target seen twice is a cycle.
void check_overflow_cycles(Problems& problems, const LinkConfig& config) {
  for (const LevelConfig& start : config.levels) {
    std::set<std::uint32_t> seen{start.level};
    const LevelConfig* level = &start;
    // Targets that are the level itself or do not exist are reported by check_ceiling.
    while (level->ceiling && level->overflow_level != 0 && level->overflow_level != level->level &&
           level->overflow_level <= config.levels.size()) {
      if (!seen.insert(level->overflow_level).second) {
        problems.add(start, "overflow targets form a cycle");
        break;
      }
      level = &config.levels[level->overflow_level - 1];
    }
  }
}

}  // namespace

std::vector<std::string> validate(const LinkConfig& config) {
  Problems problems(config);
  if (config.id.value().empty()) problems.add("the link id is empty");
  if (!positive_whole_cents(config.base_wager)) {
    problems.add("base wager " + config.base_wager.to_string() +
                 " must be a positive whole number of cents");
    return problems.take();  // Everything below is scaled by it.
  }
  if (config.levels.empty()) problems.add("the link has no levels");
  std::int64_t total_rate_ppm = 0;
  for (std::size_t i = 0; i < config.levels.size(); ++i) {
    const LevelConfig& level = config.levels[i];
    if (level.level != i + 1) {
      problems.add(level, "levels must be numbered 1, 2, 3, ... in order; expected " +
                              std::to_string(i + 1));
    }
    if (level.name.empty()) problems.add(level, "the level has no name");
    check_scaled_amount(problems, level, "seed", level.seed, config.base_wager);
    check_rate(problems, level, "meter rate", level.meter_rate_ppm, config.base_wager);
    check_rate(problems, level, "reserve rate", level.reserve_rate_ppm, config.base_wager);
    // Out-of-range rates are reported above; clamping keeps the total meaningful.
    total_rate_ppm += std::clamp<std::int64_t>(level.meter_rate_ppm, 0, Money::kPpmPerWhole) +
                      std::clamp<std::int64_t>(level.reserve_rate_ppm, 0, Money::kPpmPerWhole);
    check_ceiling(problems, config, level);
    check_must_hit_by(problems, config, level);
  }
  if (total_rate_ppm > Money::kPpmPerWhole) {
    problems.add("meter and reserve rates of all levels add up to " +
                 std::to_string(total_rate_ppm) + " ppm, more than the whole wager (1000000 ppm)");
  }
  check_overflow_cycles(problems, config);
  return problems.take();
}

std::vector<LevelRules> derive_rules(const LinkConfig& config) {
  JACKPOT_INVARIANT(validate(config).empty(), "derive_rules needs a valid configuration");
  std::vector<LevelRules> rules;
  rules.reserve(config.levels.size());
  for (const LevelConfig& level : config.levels) {
    LevelRules derived;
    derived.seed = scale_by_base(level.seed, config.base_wager)->quotient;
    derived.meter_per_unit = config.base_wager.times_ppm(level.meter_rate_ppm)->quotient;
    derived.reserve_per_unit = config.base_wager.times_ppm(level.reserve_rate_ppm)->quotient;
    derived.ceiling = level.ceiling;
    derived.overflow_level = level.overflow_level;
    if (level.must_hit_by) {
      derived.must_hit_by = scale_by_base(*level.must_hit_by, config.base_wager)->quotient;
    }
    derived.trigger = level.trigger;
    rules.push_back(derived);
  }
  return rules;
}

}  // namespace jackpot
