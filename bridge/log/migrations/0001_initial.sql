-- Sightline log, schema 1: sessions, scene snapshots and rulings.
-- One text for SQLite and PostgreSQL. {key} is the dialect's byte-ordered text type (ids and times
-- sort as bytes: plain TEXT in SQLite, TEXT COLLATE "C" in PostgreSQL).
-- Times are UTC ISO 8601 text in one fixed format, so text order is time order.

CREATE TABLE sessions (
    id            {key} PRIMARY KEY,
    world         {key} NOT NULL,
    name          TEXT NOT NULL DEFAULT '',
    started       {key} NOT NULL,
    ended         {key},
    last_activity {key} NOT NULL,
    rulings       BIGINT NOT NULL DEFAULT 0
);

-- At most one open session per world, whatever number of processes write.
CREATE UNIQUE INDEX sessions_one_open ON sessions (world) WHERE ended IS NULL;
CREATE INDEX sessions_world_started ON sessions (world, started);

CREATE TABLE snapshots (
    key   {key} PRIMARY KEY,
    scene TEXT NOT NULL,
    body  TEXT NOT NULL
);

CREATE TABLE rulings (
    id          {key} PRIMARY KEY,
    world       {key} NOT NULL,
    session     {key} NOT NULL REFERENCES sessions (id),
    time        {key} NOT NULL,
    kind        TEXT NOT NULL,
    overrides   {key} REFERENCES rulings (id),
    scene       TEXT NOT NULL,
    actor_id    TEXT NOT NULL,
    actor_name  TEXT NOT NULL,
    target_id   TEXT,
    target_name TEXT,
    action      TEXT NOT NULL,
    allowed     BOOLEAN NOT NULL,
    modifier    INTEGER,
    snapshot    {key} REFERENCES snapshots (key),
    body        TEXT NOT NULL
);

CREATE INDEX rulings_session ON rulings (session, id);
CREATE INDEX rulings_world ON rulings (world, id);
CREATE INDEX rulings_session_actor ON rulings (session, actor_id, id);
CREATE INDEX rulings_session_actor_name ON rulings (session, actor_name, id);
CREATE INDEX rulings_session_target ON rulings (session, target_id, id);
CREATE INDEX rulings_session_target_name ON rulings (session, target_name, id);
CREATE INDEX rulings_overrides ON rulings (overrides) WHERE overrides IS NOT NULL;
