-- A plan's routes as rows, instead of text lists searched with LIKE: a brand route names its
-- brand, a fallback has none; `position` is the plan's order (brand routes, then fallbacks).
CREATE TABLE plan_routes (
    plan_id       TEXT NOT NULL REFERENCES plans (id) ON DELETE CASCADE,
    position      INTEGER NOT NULL CHECK (position >= 0),
    brand         TEXT,
    connection_id TEXT NOT NULL REFERENCES processor_connections (id),
    PRIMARY KEY (plan_id, position)
);

-- SQLite has no split: walk each list one item at a time.
WITH RECURSIVE items (plan_id, kind, rest, item, n) AS (
    SELECT id, 'brand', brand_routes || ',', NULL, -1 FROM plans WHERE brand_routes <> ''
    UNION ALL
    SELECT id, 'fallback', fallbacks || ',', NULL, -1 FROM plans WHERE fallbacks <> ''
    UNION ALL
    SELECT plan_id, kind, substr(rest, instr(rest, ',') + 1), substr(rest, 1, instr(rest, ',') - 1), n + 1
      FROM items
     WHERE rest <> ''
)
INSERT INTO plan_routes (plan_id, position, brand, connection_id)
SELECT i.plan_id,
       CASE i.kind
           WHEN 'brand' THEN i.n
           ELSE i.n + (SELECT count(*) FROM items b WHERE b.plan_id = i.plan_id AND b.kind = 'brand' AND b.item IS NOT NULL)
       END,
       CASE i.kind WHEN 'brand' THEN substr(i.item, 1, instr(i.item, '=') - 1) END,
       CASE i.kind WHEN 'brand' THEN substr(i.item, instr(i.item, '=') + 1) ELSE i.item END
  FROM items i
 WHERE i.item IS NOT NULL;

ALTER TABLE plans DROP COLUMN brand_routes;
ALTER TABLE plans DROP COLUMN fallbacks;
