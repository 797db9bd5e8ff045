-- Sightline log, schema 4: a session's actions and scenes by index (issue 14), as its actors and targets
-- already are. The pages list a session's distinct actors, targets, actions and scenes (the filters'
-- choices, the scene column) and resolve a partial filter to exact values with one index seek per
-- distinct value, never a scan of the session's rulings.
CREATE INDEX rulings_session_action ON rulings (session, action, id);
CREATE INDEX rulings_session_scene ON rulings (session, scene, id);
