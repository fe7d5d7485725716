# nginx with the RTMP module from Debian 12's own packages (libnginx-mod-rtmp): an RTMP server that
# Cohost's rooms publish to and players pull from. Configuration: deploy/nginx-rtmp.conf.
FROM debian:12-slim
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends nginx libnginx-mod-rtmp \
    && rm -rf /var/lib/apt/lists/* \
    && ln -sf /dev/stderr /var/log/nginx/error.log
COPY nginx-rtmp.conf /etc/nginx/nginx.conf
RUN nginx -t
EXPOSE 1935/tcp
STOPSIGNAL SIGQUIT
CMD ["nginx", "-g", "daemon off;"]
