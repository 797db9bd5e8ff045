-- Sightline log, schema 6: where each token name sorts in the actor and target orders, the same
-- in SQLite and PostgreSQL. sort_key is computed by the bridge (bridge.log.store.name_sort_key: casefolded,
-- without accents, then the name itself) and compared byte by byte ({key}), so neither database's collation
-- decides where "Élodie" goes. name is a token's name, or its id when it has none, as the pages show it.
-- Existing logs: the bridge fills the table with the names and ids of every session right after this
-- migration (bridge.log.sql, _fill_name_sort_keys); each later ruling adds its own.
CREATE TABLE name_sort_keys (
    name     TEXT PRIMARY KEY,
    sort_key {key} NOT NULL
);
