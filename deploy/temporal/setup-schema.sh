#!/bin/sh
# Creates (or updates) Temporal's PostgreSQL schemas before the server starts: the
# admin-tools image's temporal-sql-tool, run once per `docker compose up` as the
# `temporal-schema` job. Safe to re-run: existing databases are kept, versioned updates
# apply only what is missing.
set -eu
SQL="temporal-sql-tool --plugin postgres12 --ep ${POSTGRES_SEEDS} -p ${DB_PORT} -u ${POSTGRES_USER}"
SCHEMAS=/etc/temporal/schema/postgresql/v12

for db in temporal temporal_visibility; do
  case "$db" in
    temporal) dir="$SCHEMAS/temporal/versioned" ;;
    *) dir="$SCHEMAS/visibility/versioned" ;;
  esac
  $SQL --db "$db" create || echo "database $db exists"
  # setup-schema -v 0.0 only records the baseline on a new database; update-schema then
  # applies every versioned step not yet applied.
  $SQL --db "$db" setup-schema -v 0.0 || echo "schema of $db already set up"
  $SQL --db "$db" update-schema -d "$dir"
done
echo "Temporal schemas are up to date"
