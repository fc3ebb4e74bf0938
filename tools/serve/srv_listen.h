/* The listening socket: host and port through getaddrinfo (a name, an
 * IPv4 or an IPv6 address), bound and listening before libmicrohttpd
 * takes it, so port 0 can pick a free port and say which. */
#ifndef TXLM_SRV_LISTEN_H
#define TXLM_SRV_LISTEN_H

/* The socket, or -1 after printing why; *port_out gets the port bound. */
int srv_listen(const char *host, int port, int *port_out);

#endif
