// How long recovery takes to read the balances, with and without a balance snapshot, on a
// journal of N transfers written straight in SQL (ops/bench-balances runs it on a throwaway
// cluster and prints the figures; nothing here is a test).
//
//   recovery_balances_bench DSN TRANSFERS [LINKS]
//
// Prints, each the best of three runs: the full sum that recovery did before balance
// snapshots (the account_balances view), the balances recovery reads now from the latest
// snapshot (storage::balances_from_snapshots) with no snapshot at all (every transfer summed and
// checked) and with a snapshot 1,000 transfers before the end of each link, and load_state as a
// whole in both cases.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <pqxx/pqxx>
#include <string>

#include "storage/migrations.h"
#include "storage/state_loader.h"

namespace {

double best_of_three(const std::function<void()>& run) {
  double best = 1e9;
  for (int i = 0; i < 3; ++i) {
    const auto started = std::chrono::steady_clock::now();
    run();
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: recovery_balances_bench DSN TRANSFERS [LINKS]\n");
    return 2;
  }
  const std::string dsn = argv[1];
  const long long transfers = std::atoll(argv[2]);
  const long long links = argc > 3 ? std::atoll(argv[3]) : 4;
  const long long per_link = transfers / links;
  pqxx::connection connection(dsn);
  jackpot::storage::apply_migrations(connection);
  {
    pqxx::work tx(connection);
    // Contributions to the meters and reserves of two levels, in turn.
    tx.exec("INSERT INTO links (link_id, levels) SELECT 'bench-' || l, 2 FROM generate_series(1, " +
            std::to_string(links) + ") l");
    tx.exec(
        "INSERT INTO transfers (link_id, transfer_id, debit_kind, debit_level, credit_kind, "
        "credit_level, amount_micros, kind) SELECT 'bench-' || l, g, 'wagers', 0, "
        "CASE WHEN g % 2 = 0 THEN 'meter' ELSE 'reserve' END::account_kind, 1 + g % 4 / 2, "
        "1000 + g % 7, 'contribution' FROM generate_series(1, " +
        std::to_string(links) + ") l, generate_series(1, " + std::to_string(per_link) + ") g");
    tx.commit();
  }
  pqxx::nontransaction(connection).exec("VACUUM ANALYZE transfers");
  std::printf("recovery_balances_bench: %lld links x %lld transfers\n", links, per_link);

  const double full_sum = best_of_three([&] {
    pqxx::work tx(connection);
    tx.exec("SELECT link_id, account_kind::text, level, balance_micros FROM account_balances");
  });
  const double no_snapshot = best_of_three([&] {
    pqxx::work tx(connection);
    jackpot::storage::balances_from_snapshots(tx);
  });
  const double load_no_snapshot = best_of_three([&] { jackpot::storage::load_state(connection); });
  {
    // The snapshot the daemon would have recorded 1,000 transfers before the end of each link.
    pqxx::work tx(connection);
    const std::string through = std::to_string(std::max(per_link - 1000, 0LL));
    tx.exec(
        "INSERT INTO balance_snapshots (link_id, through_transfer_id, account_kind, level, "
        "balance_micros, reason) SELECT link_id, " +
        through +
        ", account_kind, level, sum(delta)::bigint, 'interval' FROM ("
        "  SELECT link_id, credit_kind AS account_kind, credit_level AS level, amount_micros AS "
        "  delta FROM transfers WHERE transfer_id <= " +
        through +
        "  UNION ALL SELECT link_id, debit_kind, debit_level, -amount_micros FROM transfers "
        "  WHERE transfer_id <= " +
        through + ") m GROUP BY link_id, account_kind, level");
    tx.commit();
  }
  pqxx::nontransaction(connection).exec("ANALYZE balance_snapshots");
  const double with_snapshot = best_of_three([&] {
    pqxx::work tx(connection);
    jackpot::storage::balances_from_snapshots(tx);
  });
  const double load_with_snapshot =
      best_of_three([&] { jackpot::storage::load_state(connection); });

  std::printf("  full sum (account_balances, recovery before snapshots)  %8.3f s\n", full_sum);
  std::printf("  balances_from_snapshots, no snapshot (sum + checks)     %8.3f s\n", no_snapshot);
  std::printf("  balances_from_snapshots, snapshot 1000 before the end   %8.3f s\n", with_snapshot);
  std::printf("  load_state, no snapshot                                 %8.3f s\n",
              load_no_snapshot);
  std::printf("  load_state, snapshot 1000 before the end                %8.3f s\n",
              load_with_snapshot);
  return 0;
}
