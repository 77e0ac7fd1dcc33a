#!/bin/sh
# Registers the namespace Seawall uses once the server answers (the `temporal-namespace`
# job); the worker then registers its search attributes on it at start-up.
set -eu
NAMESPACE="${TEMPORAL_NAMESPACE:-default}"
for attempt in 1 2 3 4 5 6 7 8 9 10 11 12; do
  if temporal operator cluster health --address "$TEMPORAL_ADDRESS"; then
    break
  fi
  echo "the server is not answering yet (attempt $attempt)"
  sleep 5
done
temporal operator namespace describe -n "$NAMESPACE" --address "$TEMPORAL_ADDRESS" \
  || temporal operator namespace create -n "$NAMESPACE" --retention 7d --address "$TEMPORAL_ADDRESS"
echo "namespace $NAMESPACE is ready"
