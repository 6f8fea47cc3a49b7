-- Daily active users per app on generated clicks: the DAU job of dau.sql with the Kafka
-- source swapped for Flink's datagen connector, so it runs with no outside service.
--
--   pipesql run examples/dau-datagen.sql
--
-- datagen makes 200,000 clicks of 50,000 possible users across 5 apps, with event times
-- up to 3 seconds in the past (out of order). The job prints one row per app and day
-- when the input ends and the final watermark closes the day.

SET 'table.local-time-zone' = 'Asia/Shanghai';

CREATE TABLE clicks (
  app_id     INT,
  user_num   INT,
  event_time TIMESTAMP_LTZ(3),
  app     AS CONCAT('app-', CAST(app_id AS STRING)),
  user_id AS CONCAT('u-', CAST(user_num AS STRING)),
  WATERMARK FOR event_time AS event_time - INTERVAL '5' SECOND
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '200000',
  'rows-per-second' = '1000000',
  'fields.app_id.kind' = 'random',
  'fields.app_id.min' = '1',
  'fields.app_id.max' = '5',
  'fields.user_num.min' = '1',
  'fields.user_num.max' = '50000',
  'fields.event_time.max-past' = '3 s'
);

CREATE TABLE dau (
  `day` STRING,
  app   STRING,
  dau   BIGINT
) WITH (
  'connector' = 'print'
);

INSERT INTO dau
SELECT
  DATE_FORMAT(window_start, 'yyyy-MM-dd') AS `day`,
  app,
  COUNT(DISTINCT user_id) AS dau
FROM TABLE(
  TUMBLE(TABLE clicks, DESCRIPTOR(event_time), INTERVAL '1' DAY))
GROUP BY window_start, window_end, app;
