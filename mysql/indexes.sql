-- The four secondary indexes of bench_idx, built in one ALTER after the load.
ALTER TABLE bench_idx.accounts
  ADD UNIQUE KEY uq_email (email),
  ADD KEY idx_first_last (first_name, last_name),
  ADD KEY idx_last (last_name),
  ADD KEY idx_city_birth (city, birth_date);
