# SPDX-License-Identifier: Apache-2.0
# Makes the test PKI for one control plane in DIR/pki (sourced by up.sh). Keys are throw-away and
# never leave DIR. ECDSA P-256 keeps generation fast.
make_pki() {
  local dir=$1 pki=$1/pki
  [ -f "$pki/done" ] && return 0
  mkdir -p "$pki"
  (
    cd "$pki"
    openssl ecparam -name prime256v1 -genkey -noout -out ca.key 2>/dev/null
    openssl req -x509 -new -key ca.key -sha256 -days 3650 -subj "/CN=appservice-operator-test-ca" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
      -out ca.crt 2>/dev/null
    sign() { # name subject extensions
      openssl ecparam -name prime256v1 -genkey -noout -out "$1.key" 2>/dev/null
      openssl req -new -key "$1.key" -subj "$2" -out "$1.csr" 2>/dev/null
      printf '%b' "$3" > "$1.ext"
      openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -sha256 \
        -extfile "$1.ext" -out "$1.crt" 2>/dev/null
      rm -f "$1.csr" "$1.ext"
    }
    local client='keyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n'
    sign apiserver "/CN=kube-apiserver" \
      "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,IP:::1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\n"
    sign admin "/O=system:masters/CN=admin" "$client"
    sign controller-manager "/CN=system:kube-controller-manager" "$client"
    sign scheduler "/CN=system:kube-scheduler" "$client"
    # Service-account token signing pair, so `kubectl create token` works.
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    # A static bearer token for the admin, for tests of token auth.
    openssl rand -hex 24 > admin.token
    printf '%s,admin-token,admin-token-uid,"system:masters"\n' "$(cat admin.token)" > tokens.csv
    chmod 600 ./*.key admin.token tokens.csv
    touch done
  )
}

# write_kubeconfig FILE SERVER USER_CERT USER_KEY: a self-contained kubeconfig (data, not paths), so
# the file can be mounted into a container on its own.
write_kubeconfig() {
  local file=$1 server=$2 cert=$3 key=$4 pki
  pki=$(dirname "$cert")
  cat > "$file.tmp" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: $server
    certificate-authority-data: $(base64 -w0 < "$pki/ca.crt")
users:
- name: $(basename "$cert" .crt)
  user:
    client-certificate-data: $(base64 -w0 < "$cert")
    client-key-data: $(base64 -w0 < "$key")
contexts:
- name: local
  context: {cluster: local, user: $(basename "$cert" .crt), namespace: default}
current-context: local
KUBECONFIG
  chmod 600 "$file.tmp"
  mv "$file.tmp" "$file"
}
