-- Sightline log, schema 2: rulings by time within a session, for the API's from/to filters.
CREATE INDEX rulings_session_time ON rulings (session, time, id);
