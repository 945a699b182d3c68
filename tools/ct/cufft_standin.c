/* A stand-in for libcufft.so.11 so that ASTRA's wheel loads without NVIDIA's 200 MB
 * cuFFT wheel: it exports, with cuFFT's symbol version, the five functions libastra.so.0
 * names. ASTRA's cone-beam projectors never call them (its FDK/FBP filters do); any call
 * fails with CUFFT_NOT_SUPPORTED (16) rather than computing something wrong.
 * Build: gcc -shared -fPIC -Wl,-soname,libcufft.so.11 -Wl,--version-script=cufft_standin.map
 *            -o libcufft.so.11 cufft_standin.c                                    */
#define STANDIN_FAIL 16

int cufftPlan1d(void* plan, int nx, int type, int batch) { (void)plan; (void)nx; (void)type; (void)batch; return STANDIN_FAIL; }
int cufftSetStream(int plan, void* stream) { (void)plan; (void)stream; return STANDIN_FAIL; }
int cufftExecR2C(int plan, void* in, void* out) { (void)plan; (void)in; (void)out; return STANDIN_FAIL; }
int cufftExecC2R(int plan, void* in, void* out) { (void)plan; (void)in; (void)out; return STANDIN_FAIL; }
int cufftDestroy(int plan) { (void)plan; return STANDIN_FAIL; }
