-- A plan's routes as rows, instead of text lists searched with LIKE: a brand route names its
-- brand, a fallback has none; `position` is the plan's order (brand routes, then fallbacks).
CREATE TABLE plan_routes (
    plan_id       TEXT NOT NULL REFERENCES plans (id) ON DELETE CASCADE,
    position      INTEGER NOT NULL CHECK (position >= 0),
    brand         TEXT,
    connection_id TEXT NOT NULL REFERENCES processor_connections (id),
    PRIMARY KEY (plan_id, position)
);

INSERT INTO plan_routes (plan_id, position, brand, connection_id)
SELECT p.id, r.n - 1, split_part(r.pair, '=', 1), split_part(r.pair, '=', 2)
  FROM plans p,
       unnest(string_to_array(nullif(p.brand_routes, ''), ',')) WITH ORDINALITY AS r (pair, n);

INSERT INTO plan_routes (plan_id, position, brand, connection_id)
SELECT p.id, coalesce(cardinality(string_to_array(nullif(p.brand_routes, ''), ',')), 0) + f.n - 1,
       NULL, f.id
  FROM plans p,
       unnest(string_to_array(nullif(p.fallbacks, ''), ',')) WITH ORDINALITY AS f (id, n);

ALTER TABLE plans DROP COLUMN brand_routes;
ALTER TABLE plans DROP COLUMN fallbacks;
