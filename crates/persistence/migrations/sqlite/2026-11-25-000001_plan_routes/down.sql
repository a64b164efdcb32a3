ALTER TABLE plans ADD COLUMN brand_routes TEXT NOT NULL DEFAULT '';
ALTER TABLE plans ADD COLUMN fallbacks TEXT NOT NULL DEFAULT '';

UPDATE plans
   SET brand_routes = coalesce((SELECT group_concat(pair, ',')
                                  FROM (SELECT r.brand || '=' || r.connection_id AS pair
                                          FROM plan_routes r
                                         WHERE r.plan_id = plans.id AND r.brand IS NOT NULL
                                         ORDER BY r.position)), ''),
       fallbacks = coalesce((SELECT group_concat(connection_id, ',')
                               FROM (SELECT r.connection_id
                                       FROM plan_routes r
                                      WHERE r.plan_id = plans.id AND r.brand IS NULL
                                      ORDER BY r.position)), '');

DROP TABLE plan_routes;
