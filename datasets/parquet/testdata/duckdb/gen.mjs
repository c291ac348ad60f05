// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// gen.mjs writes the Parquet files of ../ with DuckDB, a writer other than
// the Go library that package parquet reads with, and their CSV twins.
// From this directory:
//
//	npm install && node gen.mjs
//
// sim100.parquet: ../sim100.csv (the first 100 subjects of the shared
// sim_logit_n1000.csv) as DuckDB reads it (id, y BIGINT; x1..x3 DOUBLE),
// Snappy, one row group.
//
// groups.parquet: 5000 rows of i BIGINT, g = 'g' || i % 7 and x = i / 2
// (DOUBLE, null where i % 10 = 0) in three row groups, Snappy (DuckDB's
// default).
//
// types.parquet, types.csv: 1200 rows of the column types package parquet
// reads, with nulls, in one row group, zstd; DuckDB writes the
// CSV from the Parquet file.
import { DuckDBInstance } from '@duckdb/node-api';

const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
const run = async (sql) => { await con.run(sql); };

await run(`COPY (SELECT * FROM read_csv('../sim100.csv', header = true))
  TO '../sim100.parquet' (FORMAT parquet, COMPRESSION snappy)`);

await run(`CREATE TABLE t AS SELECT
  i::BIGINT AS id,
  's' || lpad((i // 7)::VARCHAR, 4, '0') AS subject,
  (i % 100 - 50)::TINYINT AS small,
  ((i * 7) % 1000)::UINTEGER AS count,
  ((i % 10) / 4)::FLOAT AS quarter,
  CASE WHEN i % 11 = 0 THEN NULL ELSE sin(i) * 1000 END AS x,
  ((i % 1000) / 4)::DECIMAL(9, 2) AS price,
  (i * 1.001)::DECIMAL(18, 3) AS amount,
  CASE WHEN i % 13 = 0 THEN NULL ELSE i % 3 = 0 END AS flag,
  DATE '2024-01-01' + (i % 400)::INTEGER AS day,
  TIMESTAMP '2024-01-01 00:00:00' + to_milliseconds(i * 90061) AS at,
  ('00000000-0000-0000-0000-' || lpad(i::VARCHAR, 12, '0'))::UUID AS uid,
  CASE i % 9 WHEN 0 THEN NULL WHEN 1 THEN '' WHEN 2 THEN 'a, "quoted" label'
    WHEN 3 THEN 'line' || chr(10) || 'break' ELSE 'level ' || (i % 5)::VARCHAR END AS label,
  CASE WHEN i < 1000 THEN NULL ELSE i END AS late
FROM range(1200) r(i)`);
await run(`COPY t TO '../types.parquet' (FORMAT parquet, COMPRESSION zstd)`);
await run(`COPY (SELECT * FROM '../types.parquet') TO '../types.csv' (HEADER)`);

// DuckDB makes row groups of at least 2048 rows.
await run(`COPY (SELECT i::BIGINT AS i, 'g' || (i % 7)::VARCHAR AS g,
    CASE WHEN i % 10 = 0 THEN NULL ELSE i * 0.5 END AS x
  FROM range(5000) r(i))
  TO '../groups.parquet' (FORMAT parquet, ROW_GROUP_SIZE 2048)`);
const g = await con.runAndReadAll(`SELECT count(DISTINCT row_group_id) FROM parquet_metadata('../groups.parquet')`);
console.log('groups.parquet row groups:', g.getRows());

const r = await con.runAndReadAll(`SELECT name, type, logical_type, converted_type
  FROM parquet_schema('../types.parquet')`);
console.log(r.getRows());
const v = await con.runAndReadAll(`SELECT version()`);
console.log(v.getRows());
