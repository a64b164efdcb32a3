ALTER TABLE plans ADD COLUMN brand_routes TEXT NOT NULL DEFAULT '';
ALTER TABLE plans ADD COLUMN fallbacks TEXT NOT NULL DEFAULT '';

UPDATE plans
   SET brand_routes = coalesce((SELECT group_concat(r.brand || '=' || r.connection_id, ',' ORDER BY r.position)
                                  FROM plan_routes r
                                 WHERE r.plan_id = plans.id AND r.brand IS NOT NULL), ''),
       fallbacks = coalesce((SELECT group_concat(r.connection_id, ',' ORDER BY r.position)
                               FROM plan_routes r
                              WHERE r.plan_id = plans.id AND r.brand IS NULL), '');

DROP TABLE plan_routes;
