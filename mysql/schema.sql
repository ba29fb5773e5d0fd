-- The benchmark schemas. Both start with the primary key only: the dataset loader adds the secondary
-- indexes of bench_idx afterwards with indexes.sql, in one ALTER (much faster than loading into an indexed table).
CREATE DATABASE IF NOT EXISTS bench_idx;
CREATE DATABASE IF NOT EXISTS bench_noidx;
CREATE DATABASE IF NOT EXISTS bench_nopk;
CREATE DATABASE IF NOT EXISTS replbench_meta;

CREATE TABLE IF NOT EXISTS bench_idx.accounts (
  id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  email       VARCHAR(120)    NOT NULL,
  first_name  VARCHAR(60)     NOT NULL,
  last_name   VARCHAR(60)     NOT NULL,
  birth_date  DATE            NOT NULL,
  gender      ENUM('f','m','x') NOT NULL,
  city        VARCHAR(60)     NOT NULL,
  interests   TEXT            NOT NULL,  -- TEXT: NOBLOB and MINIMAL row images differ from FULL
  created_at  DATETIME        NOT NULL,
  updated_at  DATETIME        NOT NULL,
  PRIMARY KEY (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE IF NOT EXISTS bench_noidx.accounts LIKE bench_idx.accounts;

-- The row-based pitfall: the same columns (copied, without keys or AUTO_INCREMENT) with NO primary key and no
-- index (InnoDB adds a hidden row id). The
-- master finds the rows of a statement with one scan; under ROW each replica scans once per changed row. Filled
-- by the dataset loader with the first rows of bench_noidx (its size is recorded in built.json).
CREATE TABLE IF NOT EXISTS bench_nopk.accounts ENGINE=InnoDB AS SELECT * FROM bench_idx.accounts WHERE 1 = 0;

-- One row per master, rewritten every 100 ms during runs and read on the replicas (pt-heartbeat's method).
CREATE TABLE IF NOT EXISTS replbench_meta.heartbeat (
  id  INT UNSIGNED NOT NULL PRIMARY KEY,
  ts  DATETIME(6)  NOT NULL
) ENGINE=InnoDB;

-- What the dataset on this topology is: size and seed, checked before reuse.
CREATE TABLE IF NOT EXISTS replbench_meta.dataset (
  id        TINYINT UNSIGNED NOT NULL PRIMARY KEY,
  accounts  BIGINT UNSIGNED  NOT NULL,
  seed      BIGINT           NOT NULL,
  built_at  DATETIME         NOT NULL
) ENGINE=InnoDB;
