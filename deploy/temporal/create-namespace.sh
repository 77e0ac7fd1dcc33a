#!/bin/sh
# Registers the namespace Seawall uses once the server answers (the `temporal-namespace`
# job); the worker then registers its search attributes on it at start-up.
#
# The frontend wants mTLS in the compose stack: TEMPORAL_TLS_CLIENT_CERT_PATH,
# TEMPORAL_TLS_CLIENT_KEY_PATH and TEMPORAL_TLS_SERVER_CA_CERT_PATH (the temporal-certs job's
# admin certificate) become the CLI's TLS flags.
set -eu
NAMESPACE="${TEMPORAL_NAMESPACE:-default}"
set -- --address "$TEMPORAL_ADDRESS"
if [ -n "${TEMPORAL_TLS_CLIENT_CERT_PATH:-}" ]; then
  set -- "$@" --tls-cert-path "$TEMPORAL_TLS_CLIENT_CERT_PATH" \
    --tls-key-path "$TEMPORAL_TLS_CLIENT_KEY_PATH"
fi
if [ -n "${TEMPORAL_TLS_SERVER_CA_CERT_PATH:-}" ]; then
  set -- "$@" --tls-ca-path "$TEMPORAL_TLS_SERVER_CA_CERT_PATH"
fi
for attempt in 1 2 3 4 5 6 7 8 9 10 11 12; do
  if temporal operator cluster health "$@"; then
    break
  fi
  echo "the server is not answering yet (attempt $attempt)"
  sleep 5
done
temporal operator namespace describe -n "$NAMESPACE" "$@" \
  || temporal operator namespace create -n "$NAMESPACE" --retention 7d "$@"
echo "namespace $NAMESPACE is ready"
