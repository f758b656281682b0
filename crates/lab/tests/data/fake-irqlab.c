/* A stand-in for the aarch64 irqlab in the KVM lab test (tests/kvm_lab.rs): writes
   <--out>/kvm-check.txt with KVM_GET_API_VERSION of /dev/kvm inside the lab and its arguments. */
#include <stdio.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <string.h>
int main(int argc, char **argv) {
    const char *out = 0;
    for (int i = 1; i + 1 < argc; i++) if (!strcmp(argv[i], "--out")) out = argv[i + 1];
    if (!out) return 3;
    char path[256]; snprintf(path, sizeof path, "%s/kvm-check.txt", out);
    FILE *f = fopen(path, "w"); if (!f) return 4;
    int fd = open("/dev/kvm", O_RDWR);
    fprintf(f, "KVM_GET_API_VERSION=%d\n", fd < 0 ? -1 : ioctl(fd, 0xAE00, 0));
    for (int i = 1; i < argc; i++) fprintf(f, "arg %s\n", argv[i]);
    fclose(f);
    return 0;
}
