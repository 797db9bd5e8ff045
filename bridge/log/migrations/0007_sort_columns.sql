-- Sightline log, schema 7: the actor, target and MOD orders walk an index from a page's cursor, as time order
-- walks the id's, instead of reading and sorting the whole session for each page.
-- Each ruling keeps its place in those orders: actor_sort and target_sort, the sort key of the name the pages
-- show (bridge.log.store.name_sort_key of the token's name, else its id; '' for no target), compared byte by
-- byte ({key}); mod_sort, the MOD, or -1000 for none (below every MOD). The bridge writes them with the ruling.
-- Plain columns, not expressions: a cursor's row value (sort value, id) seeks into an index of columns in both
-- databases (SQLite does not seek a row value into an index on an expression).
-- Right after this migration the bridge fills them on an existing log (bridge.log.sql, _fill_sort_columns, from
-- name_sort_keys of schema 6), then builds their indexes, once filled: rulings_session_actor_sort,
-- rulings_session_target_sort and rulings_session_mod_sort, each (session, column, id).
ALTER TABLE rulings ADD COLUMN actor_sort {key} NOT NULL DEFAULT '';
ALTER TABLE rulings ADD COLUMN target_sort {key} NOT NULL DEFAULT '';
ALTER TABLE rulings ADD COLUMN mod_sort INTEGER NOT NULL DEFAULT -1000
