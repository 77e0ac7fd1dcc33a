#!/bin/sh
# The compose stack's certificates and the Temporal UI's password: the `temporal-certs` job,
# run before anything that talks to Temporal (docs/security-temporal.md, "Compose hardening").
#
# A private CA signs one certificate per party, each written into that party's own volume
# only, so no service can read another's key:
#   $OUT/temporal  the frontend's certificate (also its internode client certificate)
#   $OUT/worker    the worker's client certificate        (CN seawall-worker)
#   $OUT/gateway   the gateway's client certificate       (CN seawall-gateway)
#   $OUT/ui        the Temporal UI's client certificate   (CN temporal-ui)
#   $OUT/admin     the namespace job's client certificate (CN temporal-admin)
#   $OUT/ui-auth   htpasswd for the UI's reverse proxy (user $UI_USER)
#   $CA            the CA's key and the generated UI password (this job's volume only)
# Each holds ca.pem (the CA certificate) beside its own cert.pem and key.pem.
#
# Idempotent: what exists is kept, so a restart of the stack keeps its certificates; delete
# the volumes (docker compose down -v) to make new ones. SEAWALL_UI_PASSWORD sets the UI
# password; unset, one is made and printed once, on the run that makes it.
set -eu
OUT="${CERTS_OUT:-/out}"
CA="${CERTS_CA:-/ca}"
SERVER_NAMES="${TEMPORAL_SERVER_NAMES:-DNS:temporal,DNS:localhost,IP:127.0.0.1}"
UI_USER="${SEAWALL_UI_USER:-seawall}"
DAYS_CA=3650
DAYS_LEAF=825
umask 077

mkdir -p "$CA"
if [ ! -s "$CA/ca.key" ] || [ ! -s "$CA/ca.pem" ]; then
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$CA/ca.key"
  openssl req -x509 -new -key "$CA/ca.key" -sha256 -days "$DAYS_CA" \
    -subj "/CN=Seawall compose Temporal CA" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$CA/ca.pem"
  echo "temporal-certs: made a new CA"
fi

# issue NAME CN EXTENDED_KEY_USAGE [SUBJECT_ALT_NAMES]
issue() {
  dir="$OUT/$1"
  mkdir -p "$dir"
  if [ -s "$dir/cert.pem" ] && [ -s "$dir/key.pem" ] \
    && openssl verify -CAfile "$CA/ca.pem" "$dir/cert.pem" >/dev/null 2>&1; then
    cp "$CA/ca.pem" "$dir/ca.pem"
    return 0
  fi
  ext="$dir/.ext"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature"
    echo "extendedKeyUsage=$3"
    if [ -n "${4:-}" ]; then echo "subjectAltName=$4"; fi
  } >"$ext"
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$dir/key.pem"
  openssl req -new -key "$dir/key.pem" -subj "/CN=$2" -out "$dir/.csr"
  openssl x509 -req -in "$dir/.csr" -CA "$CA/ca.pem" -CAkey "$CA/ca.key" -CAcreateserial \
    -sha256 -days "$DAYS_LEAF" -extfile "$ext" -out "$dir/cert.pem"
  rm -f "$dir/.csr" "$ext"
  cp "$CA/ca.pem" "$dir/ca.pem"
  echo "temporal-certs: issued $1 ($2)"
}

issue temporal temporal "serverAuth,clientAuth" "$SERVER_NAMES"
issue worker seawall-worker clientAuth
issue gateway seawall-gateway clientAuth
issue ui temporal-ui clientAuth
issue admin temporal-admin clientAuth

# Every service runs as its own unprivileged user (uids differ between images): the files
# are readable by whoever runs in the one container that mounts each volume.
for dir in temporal worker gateway ui admin; do
  chmod 0755 "$OUT/$dir"
  chmod 0444 "$OUT/$dir"/*.pem
done

mkdir -p "$OUT/ui-auth"
if [ ! -s "$OUT/ui-auth/htpasswd" ] || [ -n "${SEAWALL_UI_PASSWORD:-}" ]; then
  password="${SEAWALL_UI_PASSWORD:-}"
  if [ -z "$password" ]; then
    password="$(openssl rand -base64 18 | tr -d '/+=' | cut -c1-20)"
    echo "$password" >"$CA/ui-password"
    echo "temporal-certs: the Temporal UI (http://<host>:8080) user is $UI_USER, password $password"
    echo "temporal-certs: (shown once; set SEAWALL_UI_PASSWORD to choose one)"
  fi
  printf '%s:%s\n' "$UI_USER" "$(openssl passwd -apr1 "$password")" >"$OUT/ui-auth/htpasswd"
fi
chmod 0755 "$OUT/ui-auth"
chmod 0444 "$OUT/ui-auth/htpasswd"
echo "temporal-certs: certificates are ready"
