// Batched vector kernels for the request Batcher: each batch of `count` vectors of `dim`
// floats is one launch.

// f(v) = sum_j sin(v_j) * v_{(j+1) mod dim}: smooth, couples neighbours, cheap.
__device__ float batch_objective(const float* v, int dim, int k, float dk) {
  float acc = 0.f;
  for (int j = 0; j < dim; j++) {
    float vj = v[j] + (j == k ? dk : 0.f);
    int n = (j + 1) % dim;
    float vn = v[n] + (n == k ? dk : 0.f);
    acc += sinf(vj) * vn;
  }
  return acc;
}

// Central finite differences: grad[i*dim+j] = (f(v + h e_j) - f(v - h e_j)) / 2h, one thread per component.
extern "C" __global__ void gradient_f32(const float* x, float* grad, int dim, int count, float h) {
  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (long long)dim * count) return;
  int i = (int)(t / dim), j = (int)(t % dim);
  const float* v = x + (long long)i * dim;
  grad[t] = (batch_objective(v, dim, j, h) - batch_objective(v, dim, j, -h)) / (2.f * h);
}

// out = a + t (b - a), t per vector; one thread per component.
extern "C" __global__ void lerp_f32(const float* a, const float* b, const float* t, float* out, int dim, int count) {
  long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= (long long)dim * count) return;
  float tt = t[k / dim];
  out[k] = a[k] + tt * (b[k] - a[k]);
}

// Spherical interpolation along the arc between a and b (by their angle omega):
// out = sin((1-t) omega)/sin(omega) a + sin(t omega)/sin(omega) b; lerp when omega is tiny.
// One thread per vector.
extern "C" __global__ void slerp_f32(const float* a, const float* b, const float* t, float* out, int dim, int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const float* va = a + (long long)i * dim;
  const float* vb = b + (long long)i * dim;
  float* vo = out + (long long)i * dim;
  float dot = 0.f, na = 0.f, nb = 0.f;
  for (int j = 0; j < dim; j++) {
    dot += va[j] * vb[j];
    na += va[j] * va[j];
    nb += vb[j] * vb[j];
  }
  float cosw = dot / (sqrtf(na) * sqrtf(nb) + 1e-30f);
  cosw = fminf(1.f, fmaxf(-1.f, cosw));
  float omega = acosf(cosw);
  float tt = t[i];
  float wa, wb;
  if (omega < 1e-4f) {
    wa = 1.f - tt;
    wb = tt;
  } else {
    float s = sinf(omega);
    wa = sinf((1.f - tt) * omega) / s;
    wb = sinf(tt * omega) / s;
  }
  for (int j = 0; j < dim; j++) vo[j] = wa * va[j] + wb * vb[j];
}
