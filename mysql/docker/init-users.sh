#!/bin/bash
# Docker entrypoint init step (compose only): create the users of mysql/users.sql, with the passwords from the
# REPLBENCH_* environment in place of its :placeholders. Sourced by the mariadb image's entrypoint.
set -eu
sed -e "s/:admin_password/'${REPLBENCH_ADMIN_PASSWORD}'/g" \
    -e "s/:repl_password/'${REPLBENCH_REPL_PASSWORD}'/g" \
    -e "s/:app_password/'${REPLBENCH_APP_PASSWORD}'/g" /replbench/users.sql | docker_process_sql
