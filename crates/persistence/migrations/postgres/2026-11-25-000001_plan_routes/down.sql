ALTER TABLE plans ADD COLUMN brand_routes TEXT NOT NULL DEFAULT '';
ALTER TABLE plans ADD COLUMN fallbacks TEXT NOT NULL DEFAULT '';

UPDATE plans p
   SET brand_routes = coalesce((SELECT string_agg(r.brand || '=' || r.connection_id, ',' ORDER BY r.position)
                                  FROM plan_routes r
                                 WHERE r.plan_id = p.id AND r.brand IS NOT NULL), ''),
       fallbacks = coalesce((SELECT string_agg(r.connection_id, ',' ORDER BY r.position)
                               FROM plan_routes r
                              WHERE r.plan_id = p.id AND r.brand IS NULL), '');

ALTER TABLE plans ALTER COLUMN brand_routes DROP DEFAULT;
ALTER TABLE plans ALTER COLUMN fallbacks DROP DEFAULT;
DROP TABLE plan_routes;
